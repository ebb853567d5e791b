#!/usr/bin/env node
/**
 * Bundles the extension into dist/extension.cjs, the one file the .vsix ships (with its source
 * map): the protocol client, the views' models and the daemon's pure view helpers inside, the
 * `vscode` module left to the editor. Needs the workspace built (`pnpm build`: the packages are
 * imported from their dist/).
 */
import { build } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

await build({
  entryPoints: [join(root, "src", "extension.ts")],
  outfile: join(root, "dist", "extension.cjs"),
  bundle: true,
  platform: "node",
  format: "cjs",
  // VS Code 1.100's extension host runs Node 20; code-server's runs Node 24.
  target: "node20",
  external: ["vscode"],
  sourcemap: "linked",
  sourcesContent: false,
  legalComments: "none",
  logLevel: "warning",
});
