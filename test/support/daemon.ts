/**
 * Spawns the real, built daemon over stdio with its own temporary BASE_CONTEXT_HOME, the way a
 * client would. Every end-to-end test starts here. In the postgres project (engine.ts) the daemon
 * also gets the home's own database through BASE_CONTEXT_STORE_URL.
 */
import { spawnDaemon, type BaseContextClient, type SpawnedDaemon } from "@base-context/protocol";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { dropStoreFor, storeEnvFor } from "./engine.js";
import { useSuiteResource } from "./suite-resource.js";
import { TEST_NODE } from "./test-node.js";

/** The installed command: runs the bundles the build makes (the tests of the shipped artefacts spawn it). */
export const DAEMON_BIN = fileURLToPath(new URL("../../packages/daemon/bin/base-context.js", import.meta.url));
/**
 * The entry the end-to-end suite runs: the installed command, i.e. the bundles users run (a
 * process from them takes half the CPU of one from the few hundred modules of dist/, and the suite
 * starts over a thousand). BASE_CONTEXT_E2E_MAIN names another, e.g.
 * packages/daemon/dist/cli/main.js to run the suite on the unbundled build.
 */
export const DAEMON_MAIN = process.env.BASE_CONTEXT_E2E_MAIN ?? DAEMON_BIN;

export interface TestDaemon extends SpawnedDaemon {
  client: BaseContextClient;
  home: string;
  /** Everything the daemon wrote to stderr so far. */
  stderr(): string;
  /** Orderly shutdown (if still running) and removal of the temporary home. */
  close(): Promise<void>;
}

export interface StartOptions {
  home?: string;
  /** Written to `<home>/settings.json` before the daemon starts. */
  settings?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  initialize?: boolean;
  projectDir?: string;
  /** The entry point to run (default DAEMON_MAIN). */
  main?: string;
}

export async function startDaemon(options: StartOptions = {}): Promise<TestDaemon> {
  const ownsHome = options.home === undefined;
  const home = options.home ?? mkdtempSync(join(tmpdir(), "bc-e2e-"));
  if (options.settings !== undefined) writeFileSync(join(home, "settings.json"), JSON.stringify(options.settings));
  // On the postgres project the home's own database (shared by every daemon given this home).
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BASE_CONTEXT_HOME: home,
    OPENAI_API_KEY: undefined,
    ...storeEnvFor(home),
    ...options.env,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const spawned = spawnDaemon({ command: TEST_NODE, args: [options.main ?? DAEMON_MAIN, "serve"], env, stderr: "pipe" });
  let stderr = "";
  spawned.process.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  let exited = false;
  void spawned.exited.then(() => (exited = true));
  if (options.initialize !== false) await spawned.client.initialize(options.projectDir ? { projectDir: options.projectDir } : {});
  return {
    ...spawned,
    home,
    stderr: () => stderr,
    async close() {
      if (!exited) {
        try {
          await spawned.client.shutdown();
        } catch {
          spawned.process.kill("SIGKILL");
        }
        await Promise.race([spawned.exited, new Promise((r) => setTimeout(r, 5000))]);
        if (!exited) spawned.process.kill("SIGKILL");
      }
      spawned.client.dispose();
      if (ownsHome) {
        rmSync(home, { recursive: true, force: true });
        dropStoreFor(home);
      }
    },
  };
}

/**
 * One daemon for the tests of the enclosing suite (the file, or the `describe` it is called in):
 * started in `beforeAll`, closed in `afterAll`; see useSuiteResource. Options that depend on
 * something else the suite starts first (a fake server's URL) are given as a function.
 *
 *   const d = useDaemon();
 *   it("…", async () => { await d.client.request(…); });
 */
export function useDaemon(options: StartOptions | (() => StartOptions) = {}): TestDaemon {
  return useSuiteResource(
    () => startDaemon(typeof options === "function" ? options() : options),
    (d) => d.close(),
    "the suite's daemon",
  );
}
