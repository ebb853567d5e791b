#!/usr/bin/env node
// `pnpm tarballs [folder]`: packs the packages a client, a plugin project or an Agents SDK app
// installs from a clone (they are not on the npm registry): the protocol client, the plugin SDK, the
// OpenAI Agents SDK session, and the core both depend on, as a release would (`pnpm pack`: workspace
// dependencies named by version). Writes them to <folder> (default: tarballs/ in the clone) and
// prints the `npm install` line for each use.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const destination = resolve(process.argv[2] ?? join(root, "tarballs"));
mkdirSync(destination, { recursive: true });

/** pnpm, as the repository pins it: the one running this script when there is one, else through npx. */
function pnpm() {
  const execPath = process.env.npm_execpath;
  if (execPath !== undefined && /pnpm/.test(basename(execPath)) && existsSync(execPath)) return [process.execPath, [execPath]];
  return ["npx", ["--yes", "pnpm@10.34.9"]];
}

const tarballs = {};
for (const name of ["protocol", "core", "plugin-sdk", "openai-agents"]) {
  const folder = join(root, "packages", name);
  if (!existsSync(join(folder, "dist", "index.js"))) {
    process.stderr.write(`packages/${name}/dist is missing: run \`pnpm build\` (or \`pnpm install\`) first\n`);
    process.exit(1);
  }
  const [command, prefix] = pnpm();
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm|pnpm)_/i.test(key)));
  const output = execFileSync(command, [...prefix, "pack", "--pack-destination", destination, "--json"], { cwd: folder, env, encoding: "utf8" });
  tarballs[name] = JSON.parse(output).filename;
}
process.stdout.write(
  [
    `Packed into ${destination}:`,
    ...Object.values(tarballs).map((file) => `  ${basename(file)}`),
    "",
    "A client (the protocol package):",
    `  npm install ${tarballs.protocol}`,
    "A plugin project (the SDK, with the two packages it depends on):",
    `  npm install ${tarballs["plugin-sdk"]} ${tarballs.core} ${tarballs.protocol}`,
    "An OpenAI Agents SDK app (Node >= 22; the daemon is the clone's: base-context on your PATH):",
    `  npm install ${tarballs["openai-agents"]} ${tarballs.core} ${tarballs.protocol}`,
    "",
  ].join("\n"),
);
