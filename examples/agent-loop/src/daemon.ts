/** The daemon the command talks to: started over stdio, watched, and shut down in order. */
import { spawnDaemon, type SpawnedDaemon } from "@base-context/protocol";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Starts `base-context serve` over stdio. Ctrl-C in the terminal reaches the daemon too, but a
 * stdio daemon ignores SIGINT (its client ends it), so the aborted reply can still be stored and
 * the turn/end that follows answered.
 */
export function startDaemon(): SpawnedDaemon {
  const { command, args } = daemonCommand();
  return spawnDaemon({ command, args, stderr: "pipe" });
}

/** The daemon this package depends on (`@base-context/daemon`), else `base-context` from PATH. */
function daemonCommand(): { command: string; args: string[] } {
  try {
    let dir = dirname(fileURLToPath(import.meta.resolve("@base-context/daemon")));
    for (;;) {
      const manifest = join(dir, "package.json");
      if (existsSync(manifest)) {
        const pkg = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; bin?: Record<string, string> };
        const bin = pkg.bin?.["base-context"];
        if (pkg.name === "@base-context/daemon" && bin) return { command: process.execPath, args: [join(dir, bin), "serve"] };
      }
      if (dirname(dir) === dir) break;
      dir = dirname(dir);
    }
  } catch {
    // not installed beside this package
  }
  return { command: "base-context", args: ["serve"] };
}

/** Keeps the daemon's log (shown live with --verbose, else its tail on failure); a dead daemon fails pending requests. */
export function watchDaemon(spawned: SpawnedDaemon, verbose: boolean): { tail(): string } {
  let buffered = "";
  spawned.process.stderr?.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    if (verbose) process.stderr.write(text.replace(/^(?=.)/gm, "[daemon log] "));
    buffered = (buffered + text).slice(-4000);
  });
  const gone = (why: string): void => {
    buffered += `\n(${why})`;
    spawned.client.dispose();
  };
  spawned.process.once("error", (error) => gone(`the daemon could not start: ${error.message}`));
  spawned.process.once("exit", (code, signal) => gone(`the daemon exited (${signal ?? `code ${code}`})`));
  return { tail: () => buffered.trim().split("\n").slice(-12).join("\n") };
}

export async function stopDaemon(spawned: SpawnedDaemon): Promise<void> {
  if (spawned.process.exitCode === null && spawned.process.signalCode === null && spawned.process.pid !== undefined) {
    try {
      await spawned.client.shutdown();
    } catch {
      spawned.process.kill();
    }
    const timer = setTimeout(() => spawned.process.kill("SIGKILL"), 5_000);
    await spawned.exited;
    clearTimeout(timer);
  }
  spawned.client.dispose();
}
