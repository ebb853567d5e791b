// Start-up and CLI latency: what an editor spawning a daemon per window, or a user typing a CLI
// command, waits for. Every row is the median of fresh processes (BENCH_STARTUP_RUNS, default 5).
//
// - spawn → `initialize` reply on an empty database, and on one holding a 100k-entry session:
//   after a quiet pause, and right after another daemon that used the same file exited;
// - the first `context/build` of a fresh daemon on the (compacted) 100k-entry session;
// - the daemon's RSS right after `initialize`, after 3 s idle, and its peak under a light load;
// - whole-process times of `base-context --help` / `show` / `tree` / `sessions` on the demo session.
//
// The 100k-entry database (~370 MB) is generated once and cached in the OS temporary folder
// (base-context-bench-cache/); each run works on a copy of it. Delete the folder to regenerate.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { daemonBin, repoRoot } from "./lib/dist.mjs";
import { progress, report } from "./lib/report.mjs";
import { median } from "./lib/stats.mjs";

if (!existsSync(daemonBin)) {
  process.stdout.write(`the daemon is not built: run \`pnpm build\`\n`);
  process.exit(1);
}

const { protocol: P, startDaemon, temporaryHome, waitForBackfill } = await import("./lib/daemon-process.mjs");
const { piEntryId, writePiSession } = await import("./lib/generated-session.mjs");

const RUNS = Math.max(5, Number(process.env.BENCH_STARTUP_RUNS ?? 5));
const ENTRIES = 100_000;
const KEPT_TAIL = 200;
/** Bump when the generated database must be rebuilt (a different shape of session). */
const CACHE_VERSION = 1;
/** The figures measured before the start path was reworked (issue 17), shown next to each row. */
const BEFORE = {
  emptyStart: "was 350–500 ms",
  largeStart: "was 400–480 ms",
  afterClose: "was 560–715 ms",
  coldBuild: "was 29–52 ms",
  rssInit: "was 71 MB",
  rssIdle: "was 202 MB",
  rssPeak: "was 224–232 MB",
  help: "was 0.16 s",
  command: "was 0.45–1.6 s",
};

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const ms = (values) => values.map((value) => value.toFixed(0)).join(", ");

/** The cached 100k-entry database: `{ databasePath, sessionId }`, generated on first use. */
async function cachedLargeDatabase() {
  const folder = join(tmpdir(), "base-context-bench-cache", `startup-100k-v${CACHE_VERSION}`);
  const marker = join(folder, "ready.json");
  if (existsSync(marker)) return { folder, ...JSON.parse(readFileSync(marker, "utf8")) };
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  progress(`generating the cached ${ENTRIES.toLocaleString("en-US")}-entry database (once) in ${folder}`);
  const file = join(folder, "generated-session.jsonl");
  await writePiSession(file, ENTRIES, { bytesPerEntry: 2640 });
  const daemon = await startDaemon(folder);
  const imported = await daemon.request(P.SessionImport, { format: "pi-jsonl", path: file });
  rmSync(file);
  // The context of a long-lived session: a compaction that keeps the recent tail.
  const compaction = {
    type: "compaction",
    summary: "## Goal\nBenchmark the daemon.\n\n## Progress\n- built a large session\n".repeat(20),
    firstKeptEntryId: piEntryId(ENTRIES - KEPT_TAIL),
    tokensBefore: ENTRIES * 175,
  };
  await daemon.request(P.EntryAppend, { sessionId: imported.session.id, entry: compaction });
  progress("waiting for the token backfill of the imported entries");
  const backfill = await waitForBackfill(folder, 600_000);
  await daemon.stop();
  if (backfill.left > 0) throw new Error(`${backfill.left} entries still lack a token count`);
  writeFileSync(marker, JSON.stringify({ sessionId: imported.session.id }));
  return { folder, sessionId: imported.session.id };
}

/** A working copy of the cached database in a throwaway home (the runs below write to it). */
function copyOfLargeDatabase(cached) {
  const home = temporaryHome("startup-100k");
  copyFileSync(join(cached.folder, "sessions.db"), join(home.path, "sessions.db"));
  return home;
}

/** Spawn → initialize reply of `RUNS` daemons, each after a quiet pause; `after(daemon)` runs before it stops. */
async function quietStarts(home, after) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    await pause(1000);
    const daemon = await startDaemon(home);
    times.push(daemon.initializeMs);
    await after?.(daemon);
    await daemon.stop();
  }
  return times;
}

/**
 * Spawn → initialize reply of a daemon started the moment another one, which served a client on
 * the same file (context builds, appends), has exited.
 */
async function startsRightAfterClose(home, sessionId) {
  const times = [];
  let previous = await startDaemon(home);
  for (let i = 0; i < RUNS; i++) {
    await previous.request(P.ContextBuild, { sessionId });
    const { session } = await previous.request(P.SessionCreate, { cwd: "/bench/project", name: `before close ${i}` });
    for (let n = 0; n < 50; n++) {
      await previous.request(P.EntryAppend, { sessionId: session.id, entry: { type: "message", message: { role: "user", content: `turn ${n}` } } });
    }
    await previous.stop();
    previous = await startDaemon(home);
    times.push(previous.initializeMs);
  }
  await previous.stop();
  return times;
}

/** Whole-process wall time of the CLI with `args`, `RUNS` times (after one unmeasured run). */
function cliTimes(home, args) {
  const run = () => {
    const started = performance.now();
    const result = spawnSync(process.execPath, [daemonBin, ...args], {
      env: { ...process.env, BASE_CONTEXT_HOME: home },
      encoding: "utf8",
    });
    const elapsed = performance.now() - started;
    if (result.status !== 0) throw new Error(`base-context ${args.join(" ")} failed (${result.status}): ${result.stderr}`);
    return elapsed;
  };
  run();
  return Array.from({ length: RUNS }, run);
}

const homes = [];
try {
  // ---- empty database ------------------------------------------------------------------------------
  progress("spawn → initialize, empty database");
  const empty = temporaryHome("startup-empty");
  homes.push(empty);
  await (await startDaemon(empty.path)).stop(); // creates the database: the runs below open it
  const emptyStarts = await quietStarts(empty.path);
  report({
    name: `spawn → initialize reply, empty database (median of ${RUNS})`,
    value: median(emptyStarts),
    unit: "ms",
    digits: 0,
    target: { max: 120 },
    note: `${ms(emptyStarts)} ms; ${BEFORE.emptyStart}`,
  });

  // ---- the 100k-entry session ----------------------------------------------------------------------
  const cached = await cachedLargeDatabase();
  const large = copyOfLargeDatabase(cached);
  homes.push(large);
  // The copy is opened once so that nothing a first open does (a migration of an older cache) is measured.
  await (await startDaemon(large.path)).stop();

  progress("spawn → initialize and first context/build, 100k-entry session");
  const firstBuilds = [];
  const largeStarts = await quietStarts(large.path, async (daemon) => {
    const started = performance.now();
    await daemon.request(P.ContextBuild, { sessionId: cached.sessionId });
    firstBuilds.push(performance.now() - started);
  });
  report({ name: `spawn → initialize reply, 100k-entry session (quiet restart)`, value: median(largeStarts), unit: "ms", digits: 0, target: { max: 120 }, note: `${ms(largeStarts)} ms; ${BEFORE.largeStart}` });

  progress("spawn → initialize right after another daemon on the same file exited");
  const afterClose = await startsRightAfterClose(large.path, cached.sessionId);
  report({ name: `spawn → initialize reply, 100k session, right after another daemon closed it`, value: median(afterClose), unit: "ms", digits: 0, target: { max: 120 }, note: `${ms(afterClose)} ms; ${BEFORE.afterClose}` });
  report({ name: `first context/build after restart, 100k-entry session`, value: median(firstBuilds), unit: "ms", digits: 1, target: { max: 25 }, note: `${ms(firstBuilds)} ms; ${BEFORE.coldBuild}` });

  // ---- memory --------------------------------------------------------------------------------------
  progress("daemon RSS: after initialize, after 3 s idle, peak under a light load");
  const rss = { init: [], idle: [], peak: [] };
  for (let i = 0; i < RUNS; i++) {
    const daemon = await startDaemon(large.path);
    rss.init.push(daemon.memory().currentMB);
    await pause(3000);
    rss.idle.push(daemon.memory().currentMB);
    for (let n = 0; n < 5; n++) await daemon.request(P.ContextBuild, { sessionId: cached.sessionId });
    const { session } = await daemon.request(P.SessionCreate, { cwd: "/bench/project", name: "startup load" });
    for (let n = 0; n < 200; n++) {
      await daemon.request(P.EntryAppend, {
        sessionId: session.id,
        entry: { type: "message", message: { role: "user", content: `${"lorem ipsum ".repeat(85)}#${n}` } },
      });
    }
    await daemon.request(P.ContextBuild, { sessionId: session.id });
    await daemon.request(P.SessionDelete, { sessionId: session.id });
    rss.peak.push(daemon.memory().peakMB);
    await daemon.stop();
  }
  report({ name: "daemon RSS right after initialize (100k session stored)", value: median(rss.init), unit: "MB", digits: 0, note: BEFORE.rssInit });
  report({ name: "daemon RSS after 3 s idle", value: median(rss.idle), unit: "MB", digits: 0, target: { max: 120 }, note: BEFORE.rssIdle });
  report({ name: "daemon peak RSS (5 context/build, 200 appends, a small session built)", value: median(rss.peak), unit: "MB", digits: 0, target: { max: 160 }, note: BEFORE.rssPeak });

  // ---- the CLI on the demo session ---------------------------------------------------------------------
  progress("CLI whole-process times on the demo session");
  const demo = temporaryHome("startup-demo");
  homes.push(demo);
  const demoFile = join(repoRoot, "examples", "sessions", "refactor-auth.jsonl");
  // As the README's demo makes it (`pnpm demo`): imported and compacted.
  const imported = spawnSync(process.execPath, [daemonBin, "compact", demoFile], {
    env: { ...process.env, BASE_CONTEXT_HOME: demo.path },
    encoding: "utf8",
  });
  if (imported.status !== 0) throw new Error(`importing the demo session failed: ${imported.stderr}`);
  const demoSession = "5b0c2f4e";
  // For scale on a shared machine: a Node process that does nothing, started the same way.
  const bare = Array.from({ length: RUNS }, () => {
    const started = performance.now();
    spawnSync(process.execPath, ["-e", "0"]);
    return performance.now() - started;
  });
  report({ name: "node -e 0 (whole process, for scale: what any command costs at least)", value: median(bare) / 1000, unit: "s", digits: 3, note: `${ms(bare)} ms` });
  const help = cliTimes(demo.path, ["--help"]);
  report({ name: "base-context --help (whole process)", value: median(help) / 1000, unit: "s", digits: 3, target: { max: 0.1 }, note: `${ms(help)} ms; ${BEFORE.help}` });
  for (const command of [["show", demoSession], ["tree", demoSession], ["sessions"]]) {
    const times = cliTimes(demo.path, command);
    report({
      name: `base-context ${command[0]} on the demo session (whole process)`,
      value: median(times) / 1000,
      unit: "s",
      digits: 3,
      target: { max: 0.3 },
      note: `${ms(times)} ms; ${BEFORE.command}`,
    });
  }
} finally {
  for (const home of homes) home.remove();
}
