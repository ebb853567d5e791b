#!/usr/bin/env node
// `pnpm demo`: compacts the sample session with the built CLI in a home of its own under the
// system's temporary folder, never the user's ~/.base-context. Each run starts from an empty home
// (so each run shows the same first compaction) and says where it wrote and how to look further.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const home = join(tmpdir(), "base-context-demo");
const cli = join(root, "packages", "daemon", "dist", "cli", "main.js");
const sample = join(root, "examples", "sessions", "refactor-auth.jsonl");

rmSync(home, { recursive: true, force: true });
process.stdout.write(`Demo home: ${home} (emptied at each run; your ~/.base-context is not touched)\n\n`);
const env = { ...process.env, BASE_CONTEXT_HOME: home };
delete env.BASE_CONTEXT_DB;
delete env.BASE_CONTEXT_STORE_URL;
const result = spawnSync(process.execPath, [cli, "compact", sample], { stdio: "inherit", env });
if (result.status === 0) {
  process.stdout.write(
    `\nThe demo's session stays in ${home} until the next demo. To look at it with the other commands:\n` +
      `  BASE_CONTEXT_HOME=${home} node packages/daemon/bin/base-context.js tree 5b0c\n`,
  );
}
process.exitCode = result.status ?? 1;
