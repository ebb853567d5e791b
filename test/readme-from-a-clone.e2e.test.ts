/**
 * The README's client instructions, run as a newcomer with a clone runs them: the documented
 * command puts `base-context` on the PATH (`npm link` of the daemon package, into a scratch npm
 * prefix here), `pnpm tarballs` packs the protocol client, and in a project outside the repository
 * `npm install <tarball>` and the README's TypeScript snippet, copied as it stands, work; so does
 * the main README's Python command. Needs the packages built and npm's registry or cache
 * (`--prefer-offline`) for the client's two registry dependencies.
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeEnvFor } from "./support/engine.js";
import { tempDirs } from "./support/temp-dir.js";

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, "..");
const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
const dirs = tempDirs();

/** The environment for npm without what a running `pnpm test` set for its own scripts. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm|pnpm)_/i.test(name)));
  delete env.OPENAI_API_KEY;
  return { ...env, ...extra };
}

/** The one fenced block of the README in `language` that contains `marker`. */
function readmeBlock(language: string, marker: string): string {
  const blocks = [...readme.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)```", "g"))].map((match) => match[1]!);
  const found = blocks.filter((block) => block.includes(marker));
  expect(found, `README blocks in ${language} with ${marker}`).toHaveLength(1);
  return found[0]!;
}

describe("the README from a clone", () => {
  let prefix: string;
  let pathWithLink: string;
  let tarballs: string;

  beforeAll(async () => {
    // The README's command, with npm's global folder moved to a scratch one.
    const link = readmeBlock("sh", "npm link").trim().split("\n")[0]!.replace(/\s+#.*$/, "");
    expect(link).toBe("(cd packages/daemon && npm link)");
    prefix = dirs.make("bc-npm-prefix-");
    await run("sh", ["-c", link], { cwd: repoRoot, env: cleanEnv({ npm_config_prefix: prefix }) });
    pathWithLink = `${join(prefix, "bin")}${delimiter}${process.env.PATH ?? ""}`;
    expect(readme).toContain("npx --yes pnpm@10.34.9 tarballs");
    tarballs = dirs.make("bc-tarballs-");
    await run(process.execPath, [join(repoRoot, "scripts", "pack-tarballs.mjs"), tarballs], { cwd: repoRoot, env: cleanEnv() });
  }, 240_000);
  afterAll(() => dirs.cleanup());

  it("puts base-context on the PATH with one command", async () => {
    const { stdout } = await run("base-context", ["--version"], { env: cleanEnv({ PATH: pathWithLink }) });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("runs the TypeScript snippet in a project outside the repository, with the client installed from its tarball", async () => {
    const app = dirs.make("bc-readme-app-");
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-agent", private: true, type: "module" }));
    const install = readmeBlock("sh", "npm install <path-to-clone>/tarballs/base-context-protocol").trim();
    const tarball = install.replace("<path-to-clone>/tarballs", tarballs).split(/\s+/).at(-1)!;
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", tarball], { cwd: app, env: cleanEnv() });

    writeFileSync(join(app, "snippet.mjs"), readmeBlock("ts", "spawnDaemon"));
    const home = dirs.make("bc-readme-home-");
    const env = cleanEnv({ PATH: pathWithLink, BASE_CONTEXT_HOME: home, ...storeEnvFor(home) });
    const snippet = await run(process.execPath, ["snippet.mjs"], { cwd: app, env, timeout: 60_000 });
    expect(snippet.stdout).toBe("");

    // What it did is in the database: one session with the user's message.
    const listed = await run("base-context", ["sessions", "--json"], { env });
    const sessions = (JSON.parse(listed.stdout) as { sessions: { id: string; cwd: string }[] }).sessions;
    expect(sessions).toHaveLength(1);
    const shown = await run("base-context", ["show", sessions[0]!.id], { env });
    expect(shown.stdout).toContain("Fix the login bug");
  }, 180_000);

  it("runs the Python example with the README's command", async () => {
    expect(readme).toContain("cd examples/clients/python && python3 scenario.py");
    const home = dirs.make("bc-readme-python-");
    const env = cleanEnv({ PATH: pathWithLink, BASE_CONTEXT_HOME: home, ...storeEnvFor(home), PYTHONIOENCODING: "utf-8" });
    delete env.BASE_CONTEXT_COMMAND;
    const { stdout } = await run("python3", ["scenario.py"], { cwd: join(repoRoot, "examples", "clients", "python"), env, timeout: 110_000 });
    expect(stdout.trimEnd().split("\n").at(-1)).toBe("Shut down: the daemon exited with code 0");
  }, 120_000);

  it("says how to put base-context on the PATH when the Python example cannot start it", async () => {
    const env = cleanEnv({ BASE_CONTEXT_COMMAND: "base-context-not-installed serve", BASE_CONTEXT_HOME: dirs.make("bc-readme-python-") });
    const failed = await run("python3", ["scenario.py"], { cwd: join(repoRoot, "examples", "clients", "python"), env }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("'base-context-not-installed' is not on the PATH");
    expect(failed.stderr).toContain("(cd packages/daemon && npm link)");
    expect(failed.stderr).not.toContain("Traceback");
  });

});
