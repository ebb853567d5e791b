/**
 * A `base-context` on the PATH, as after an install, for tests that read the commands the CLI
 * prints in its hints: with one on the PATH they say `base-context …`; without, `node <path> …`
 * (that case is tested on its own).
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { DAEMON_MAIN } from "./daemon.js";
import { TEST_NODE } from "./test-node.js";

let dir: string | undefined;

/** `PATH` with a folder holding a `base-context` that runs the built CLI, first. */
export function pathWithCli(path: string = process.env.PATH ?? ""): string {
  if (dir === undefined) {
    dir = mkdtempSync(join(tmpdir(), "bc-cli-bin-"));
    const script = join(dir, "base-context");
    writeFileSync(script, `#!/bin/sh\nexec '${TEST_NODE}' '${DAEMON_MAIN}' "$@"\n`);
    chmodSync(script, 0o755);
  }
  return `${dir}${delimiter}${path}`;
}
