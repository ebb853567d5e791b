// A throwaway PostgreSQL server for the benches: scripts/local-postgres.mjs (the README's command
// for trying the PostgreSQL engine) creates and starts a cluster in a temporary folder and prints
// its store URL; `stop()` stops it and removes the folder.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const script = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "scripts", "local-postgres.mjs");

export async function startPostgresCluster() {
  const folder = mkdtempSync(join(tmpdir(), "base-context-bench-postgres-"));
  // Run as root, the script runs the server as the postgres user, who must reach the cluster folder.
  chmodSync(folder, 0o755);
  const cluster = join(folder, "cluster");
  const run = (args) => execFileSync(process.execPath, [script, cluster, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  try {
    const url = run([]).trim();
    return {
      url,
      stop() {
        try {
          run(["--stop"]);
        } finally {
          rmSync(folder, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw new Error(`could not start a PostgreSQL server for the bench: ${error.stderr || error.message}`);
  }
}
