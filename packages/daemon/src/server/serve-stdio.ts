/**
 * `base-context serve` over stdio: one Daemon for the client that started it, the protocol on
 * its own copy of stdout (protocol-output.ts), until the client sends `exit` or closes stdin.
 */
// The daemon's parts, its handlers and the summarizers are imported after the `initialize` reply
// (startDaemon): loading them, and the protocol schemas only they use, is not on its path.
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_QUEUED_OUTPUT_BYTES } from "@base-context/protocol";
import { existsSync } from "node:fs";
import type { Daemon } from "../daemon.js";
import { RequestFailedError } from "../errors.js";
import { log } from "../log.js";
import { globalSettingsPath } from "../paths.js";
import { sqliteAddonError, storeLocation, StoreOpenError, StoreUrlError, type StoreLocation } from "../sessions/store-display.js";
import type { SettingsManager } from "../settings/index.js";
import { guardFd1, protocolOutput } from "./protocol-output.js";
import { Router, type Peer } from "./router.js";
import { STARTUP_QUIET_MS, startBackgroundWork, stopBackgroundWork } from "./serve-background.js";
import { startServer } from "./server.js";
import { CAPABILITIES, logSummarizerSetup, SERVER_INFO } from "./serving.js";

let quiet: ((served: boolean) => void) | undefined;

/**
 * `listener` is told of the daemon's quiet moments, when work off the requests' path may be done:
 * the first moment the client is quiet once the daemon is built, the first after it has served a
 * request (other than the lifecycle's) when that came later, and its exit; each time, whether it
 * had served one by then. (The loader of the daemon's bundle writes its code cache then.)
 */
export function onQuietMoments(listener: (served: boolean) => void): void {
  quiet = listener;
}

/**
 * Serves until the client ends the connection; resolves with the exit code (the process exits too).
 *
 * The start path (docs/architecture.md#start-path-and-bundles): only the settings are read before
 * the `initialize` reply (they bound the size of every message, the first included), and only when
 * there is a settings file: without one the bound is the default, and the settings (their schemas
 * take a while to build) are loaded after the reply with the rest of the daemon. The database
 * is opened, checked and tidied (migrations, abandoned imports and jobs) and the handlers are
 * registered right after the reply has gone out; a request arriving meanwhile waits for them.
 * So the reply does not depend on the database's size, on a migration, or on another daemon
 * still closing the same file. Background work starts later still (serve-background.ts).
 */
export async function serveStdio(): Promise<number> {
  // A settings file created after this look is read when the settings load, a moment after the
  // reply: the messages read meanwhile are bounded as if it had come a moment later.
  const router = new Router();
  // The settings files are watched from the first quiet moment (a second after the start at the
  // latest), not while the first requests wait: a process's first fs.watch costs milliseconds.
  const watchFrom = Promise.race([router.activity.whenIdle(STARTUP_QUIET_MS), delay(WATCH_SETTINGS_AFTER_MS)]);
  let settings = existsSync(globalSettingsPath(process.env)) ? await loadSettings(watchFrom) : undefined;
  const settingsLoaded = async (): Promise<SettingsManager> => (settings ??= await loadSettings(watchFrom));
  const output = protocolOutput();
  let ready: Promise<Daemon> | undefined;
  return new Promise<number>((resolve) => {
    const server = startServer({
      input: process.stdin,
      output,
      router,
      serverInfo: SERVER_INFO,
      capabilities: CAPABILITIES,
      maxMessageBytes: () => settings?.get().settings.limits.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      maxQueuedOutputBytes: () => settings?.get().settings.limits.maxQueuedOutputBytes ?? DEFAULT_MAX_QUEUED_OUTPUT_BYTES,
      maxSummaryBytes: () => settings?.get().settings.limits.maxSummaryBytes ?? 1024 * 1024,
      onInitialize: ({ projectDir }) => {
        const read = settings === undefined ? "settings read after the reply: no settings file" : "settings read";
        log("debug", `start: answering initialize ${performance.now().toFixed(0)} ms after the process started (${cpuMs().toFixed(0)} ms of CPU; ${read})`);
        ready = afterReply(output).then(settingsLoaded).then((loaded) => startDaemon(loaded, router, server.peer));
        ready.then(
          (started) => {
            // Not awaited: loading plugins must not hold up requests; a hook arriving early waits for it.
            // Started in the first pause between requests, not in the way of the client's first
            // ones, after fd 1 has left the client's socket (protocol-output.ts: the helper process
            // that takes, started then too; a hook arriving earlier starts it and waits for it).
            const { activity } = router;
            void activity
              .whenIdle(STARTUP_QUIET_MS)
              .then(guardFd1)
              .then(async () => {
                started.plugins.startInBackground(projectDir);
                quiet?.(activity.served > 0);
                if (quiet === undefined || activity.served > 0) return;
                await activity.whenServed();
                await activity.whenIdle(STARTUP_QUIET_MS);
                quiet?.(true);
              });
            // Token counter warm-up and backfill, in the gaps between requests.
            startBackgroundWork(started, router.activity);
          },
          (error: unknown) => log("error", (error as Error).message),
        );
        router.deferUntil(ready.then(() => undefined));
      },
      onExit: (code) => {
        // A daemon still being built is disposed once it is (it has nothing to do then).
        const disposeSettings = () => settings?.dispose();
        const disposed = ready === undefined ? Promise.resolve(disposeSettings()) : ready.then(stopDaemon, disposeSettings);
        void disposed
          .catch((error: unknown) => log("error", `shutdown: ${String(error)}`))
          .finally(() => {
            quiet?.(router.activity.served > 0);
            resolve(code);
            // stdin is still open when the client sent `exit` and would keep the process alive:
            // leave once everything written to the client has been handed to the OS.
            output.write("", () => process.exit(code));
          });
      },
    });
    handleSignals();
  });
}

/** At the latest, the settings files are watched this long after the start (see `watchFrom`). */
const WATCH_SETTINGS_AFTER_MS = 1000;

async function loadSettings(watchFrom: Promise<void>): Promise<SettingsManager> {
  const { SettingsManager } = await import("../settings/index.js");
  return new SettingsManager({ env: process.env, watchFrom });
}

/** Resolves after `ms`, without keeping the process alive. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** CPU time of the process so far (all its threads). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Stops background work, then releases everything. */
async function stopDaemon(started: Daemon): Promise<void> {
  stopBackgroundWork(started);
  await started.dispose();
}

/** Resolves once what was written to `output` so far (the `initialize` reply) has been handed to the OS. */
function afterReply(output: NodeJS.WritableStream): Promise<void> {
  // setImmediate: the reply is queued by the promise callbacks that follow the handler.
  return new Promise((resolve) => setImmediate(() => output.write("", () => resolve())));
}

/** Loads the daemon's code, opens the database and builds the daemon's parts, then registers their handlers. */
async function startDaemon(settings: SettingsManager, router: Router, peer: Peer): Promise<Daemon> {
  const started = performance.now();
  const cpuStarted = cpuMs();
  const [{ Daemon }, { registerHandlers }] = await Promise.all([import("../daemon.js"), import("./handlers/index.js")]);
  const loaded = performance.now();
  const cpuLoaded = cpuMs();
  let daemon: Daemon;
  try {
    daemon = new Daemon({ settings });
  } catch (error) {
    throw storeFailure(error, settings);
  }
  await logSummarizerSetup(daemon);
  registerHandlers(router, daemon, peer);
  const built = (performance.now() - loaded).toFixed(0);
  const cpu = `${(cpuLoaded - cpuStarted).toFixed(0)} and ${(cpuMs() - cpuLoaded).toFixed(0)} ms of CPU`;
  log("debug", `start: daemon code loaded in ${(loaded - started).toFixed(0)} ms; database opened, daemon built and handlers registered in ${built} ms (${cpu})`);
  return daemon;
}

/**
 * Why the daemon could not open its store, as `request_failed` data: the SQLite file, or the
 * PostgreSQL URL with its password redacted (never the password), and what to run.
 */
function storeFailure(error: unknown, settings: SettingsManager): RequestFailedError {
  const message = (error as Error).message;
  const hint = "run `base-context doctor` to see what is wrong with it";
  let location: StoreLocation | undefined = error instanceof StoreOpenError ? error.location : undefined;
  if (error instanceof StoreUrlError) {
    return new RequestFailedError(`the daemon cannot use its session store: ${message}`, { storeUrl: error.display, hint });
  }
  try {
    location ??= storeLocation({ env: process.env, settingsUrl: settings.get().settings.store.url });
  } catch {
    location = undefined;
  }
  if (location?.engine === "postgres") {
    const text = error instanceof StoreOpenError ? message : `cannot open the session store ${location.display}: ${message}`;
    return new RequestFailedError(`the daemon cannot use its session store: ${text}`, { storeUrl: location.display, hint });
  }
  const path = location?.display ?? "";
  // The driver, not the file: `doctor` would show the same, and the fix is a rebuild.
  const addon = sqliteAddonError(error);
  if (addon) {
    return new RequestFailedError(`the daemon cannot open its session database ${path}: ${addon.message}`, {
      databasePath: path,
      hint: addon.fixes.join("\n"),
    });
  }
  return new RequestFailedError(`the daemon cannot use its session database ${path}: ${message}`, { databasePath: path, hint });
}

/**
 * A daemon over stdio belongs to the client that started it, which ends it with `exit` or by
 * closing stdin. Ctrl-C in the client's terminal reaches the whole process group, the daemon
 * included, while the client may still want to store what the interrupted turn produced: so
 * SIGINT is ignored unless the daemon itself was started from a terminal. SIGTERM (and that
 * SIGINT) end it in order, as a closed stdin does: work in flight is dropped, the store closed.
 */
function handleSignals(): void {
  const stop = (signal: NodeJS.Signals) => {
    log("info", `${signal}: stopping`);
    process.stdin.destroy();
  };
  process.once("SIGTERM", stop);
  process.on("SIGINT", () => {
    if (process.stdin.isTTY) stop("SIGINT");
    else log("debug", "SIGINT ignored: the client that started this daemon ends it (exit, or closing stdin)");
  });
}
