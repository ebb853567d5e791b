// The daemon over stdio, through the protocol package's client: cold start, building sessions of
// 1k and 10k entries with entry/appendMany, importing a ~288 MB pi JSONL file of 100k entries
// (which is also the 100k-entry session of the other measurements), append latency,
// context/build on the compacted 100k-entry session (warm and cold), peak RSS against entries
// stored, and how long an idle daemon takes to backfill the token counts the import left out.
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { daemonMain } from "./lib/dist.mjs";
import { progress, report } from "./lib/report.mjs";
import { median, percentile, since, timeRuns } from "./lib/stats.mjs";

if (!existsSync(daemonMain)) {
  process.stdout.write(`the daemon is not built (${daemonMain} is missing): run \`pnpm build\`\n`);
  process.exit(1);
}

const { protocol: P, startDaemon, temporaryHome, waitForBackfill } = await import("./lib/daemon-process.mjs");
const { conversation, piEntryId, writePiSession } = await import("./lib/generated-session.mjs");

const BATCH = 1000;
/** Entries kept after the compaction appended to each built session. */
const KEPT_TAIL = 200;
const APPENDS = 2000;
const WARM_UP_APPENDS = 2000;
const IMPORT_ENTRIES = 100_000;
// Tuned so the file is ~288 MB (~2.9 KB per line), as in the brief.
const IMPORT_BYTES_PER_ENTRY = 2640;

const chat = conversation(700);
const oneKilobyte = (index) => ({
  type: "message",
  message: { role: "user", content: `${"lorem ipsum dolor sit amet ".repeat(38)}#${index}`.slice(0, 1024) },
});

/** Appends `entryCount` entries in batches, then a compaction that keeps the last KEPT_TAIL. */
async function buildCompactedSession(daemon, entryCount) {
  const { session } = await daemon.request(P.SessionCreate, { cwd: "/bench/project", name: `bench ${entryCount}` });
  const ids = [];
  const started = performance.now();
  for (let first = 0; first < entryCount; first += BATCH) {
    const bodies = chat.entryBodies(Math.min(BATCH, entryCount - first), first);
    const { entries } = await daemon.request(P.EntryAppendMany, { sessionId: session.id, entries: bodies });
    for (const entry of entries) ids.push(entry.id);
  }
  const buildMs = since(started);
  await compact(daemon, session.id, ids[entryCount - KEPT_TAIL], entryCount);
  return { sessionId: session.id, buildMs };
}

/** Appends a compaction entry directly (no summarizer): the context keeps from `firstKeptEntryId`. Returns its id. */
async function compact(daemon, sessionId, firstKeptEntryId, entryCount) {
  // KEPT_TAIL is a multiple of 4, so the first kept entry is a user message (a valid cut point).
  const compaction = {
    type: "compaction",
    summary: "## Goal\nBenchmark the daemon.\n\n## Progress\n- built a large session\n".repeat(20),
    firstKeptEntryId,
    tokensBefore: entryCount * 175,
  };
  return (await daemon.request(P.EntryAppend, { sessionId, entry: compaction })).entry.id;
}

/** The same light workload on any session: build its context a few times, append 200 × 1 KB. */
async function lightWorkload(daemon, sessionId) {
  for (let i = 0; i < 5; i++) await daemon.request(P.ContextBuild, { sessionId });
  for (let i = 0; i < 200; i++) await daemon.request(P.EntryAppend, { sessionId, entry: oneKilobyte(i) });
}

const homes = [];
const home = (label) => {
  const created = temporaryHome(label);
  homes.push(created);
  return created.path;
};

try {
  // ---- cold start ------------------------------------------------------------------------------
  progress("cold start");
  const emptyHome = home("empty");
  const starts = [];
  for (let i = 0; i < 3; i++) {
    const daemon = await startDaemon(emptyHome);
    starts.push(daemon.initializeMs);
    await daemon.stop();
  }
  report({ name: "cold start → initialize reply (empty database), median of 3", value: median(starts), unit: "ms", digits: 0 });

  // ---- building sessions with entry/appendMany --------------------------------------------------
  progress("building a 1k-entry session");
  const smallHome = home("1k");
  let daemon = await startDaemon(smallHome);
  const small = await buildCompactedSession(daemon, 1_000);
  await daemon.stop();

  const largeHome = home("100k");
  daemon = await startDaemon(largeHome);
  progress("building a 10k-entry session");
  const medium = await buildCompactedSession(daemon, 10_000);
  for (const [label, entries, built] of [["1k", 1_000, small], ["10k", 10_000, medium]]) {
    report({
      name: `build ${label} entries (entry/appendMany × ${BATCH}, ~0.7 KB each)`,
      value: entries / (built.buildMs / 1000),
      unit: "entries/s",
      digits: 0,
      note: `${(built.buildMs / 1000).toFixed(1)} s`,
    });
  }

  // ---- import: the 100k-entry session ------------------------------------------------------------
  progress(`writing a ${IMPORT_ENTRIES.toLocaleString("en-US")}-entry pi JSONL file`);
  const file = join(largeHome, "generated-session.jsonl");
  const bytes = await writePiSession(file, IMPORT_ENTRIES, { bytesPerEntry: IMPORT_BYTES_PER_ENTRY });
  progress(`importing ${(bytes / 1e6).toFixed(0)} MB`);
  const importStarted = performance.now();
  const imported = await daemon.request(P.SessionImport, { format: "pi-jsonl", path: file });
  const importMs = since(importStarted);
  rmSync(file);
  report({
    name: `session/import of ${(bytes / 1e6).toFixed(0)} MB pi JSONL (${imported.entryCount.toLocaleString("en-US")} entries)`,
    value: importMs / 1000,
    unit: "s",
    digits: 1,
    target: { max: 15 },
    note: `${(bytes / 1e6 / (importMs / 1000)).toFixed(0)} MB/s`,
  });
  const large = { sessionId: imported.session.id };
  const compactionId = await compact(daemon, large.sessionId, piEntryId(IMPORT_ENTRIES - KEPT_TAIL), IMPORT_ENTRIES);

  // ---- context/build, warm --------------------------------------------------------------------
  progress("context/build (warm) and appends on the 100k session");
  const build = () => daemon.request(P.ContextBuild, { sessionId: large.sessionId });
  const context = await build();
  // Warm: the path is cached and both processes have run the code a few times (the first calls of
  // a fresh daemon are measured below as cold).
  await timeRuns(10, build);
  const warm = await timeRuns(30, build);
  report({
    name: `context/build, compacted 100k session, warm (p50 of 30)`,
    value: median(warm),
    unit: "ms",
    digits: 2,
    target: { max: 10 },
    note: `max ${Math.max(...warm).toFixed(1)} ms; ${context.messages.length} messages, ${context.tokens.toLocaleString("en-US")} tokens`,
  });

  // ---- append latency --------------------------------------------------------------------------
  // The target is the steady state of a long-lived daemon. A fresh burst of appends starts slower
  // (here ~0.7 ms, settling after ~1,500): V8 optimizing the append path in both processes, and the
  // virtual machine's vCPUs adapting to the ping-pong between them. Those first appends go to a
  // session of their own and are reported without a target.
  const { session: warmUpSession } = await daemon.request(P.SessionCreate, { cwd: "/bench/project", name: "append warm-up" });
  const warmUp = await timeRuns(WARM_UP_APPENDS, (i) =>
    daemon.request(P.EntryAppend, { sessionId: warmUpSession.id, entry: oneKilobyte(i) }),
  );
  report({
    name: `entry/append 1 KB, the first ${WARM_UP_APPENDS} of a fresh burst (warm-up), p50`,
    value: median(warmUp),
    unit: "ms",
    digits: 3,
  });
  await timeRuns(100, (i) => daemon.request(P.EntryAppend, { sessionId: large.sessionId, entry: oneKilobyte(i) }));
  const appends = await timeRuns(APPENDS, (i) =>
    daemon.request(P.EntryAppend, { sessionId: large.sessionId, entry: oneKilobyte(100 + i) }),
  );
  report({
    name: `entry/append 1 KB on the 100k session, p50 of ${APPENDS}`,
    value: median(appends),
    unit: "ms",
    digits: 3,
    target: { max: 0.5 },
  });
  report({ name: `entry/append 1 KB on the 100k session, p99`, value: percentile(appends, 99), unit: "ms", digits: 3, target: { max: 5 } });
  // The appends stay in the session (114k entries stored) on a branch of their own: back at the
  // compaction, the current context is the one measured warm above, so cold and warm compare.
  const appendsLeafId = (await daemon.request(P.SessionGet, { sessionId: large.sessionId })).leafId;
  await daemon.request(P.SessionBranch, { sessionId: large.sessionId, entryId: compactionId });
  const builderPeak = daemon.memory()?.peakMB;
  await daemon.stop();

  // ---- cold context/build, and memory against entries stored ------------------------------------
  progress("cold context/build; memory with 1k vs 114k entries stored");
  // One fresh daemon is one sample of a noisy thing: three, and the median (the last one stays up).
  const coldStarts = [];
  const coldBuilds = [];
  let coldContext;
  for (let i = 0; i < 3; i++) {
    if (i > 0) await daemon.stop();
    daemon = await startDaemon(largeHome);
    coldStarts.push(daemon.initializeMs);
    const coldStarted = performance.now();
    coldContext = await daemon.request(P.ContextBuild, { sessionId: large.sessionId });
    coldBuilds.push(since(coldStarted));
  }
  report({ name: "cold start → initialize reply (114k entries stored), median of 3", value: median(coldStarts), unit: "ms", digits: 0 });
  report({
    name: "context/build, compacted 100k session, cold (fresh daemon, first call), median of 3",
    value: median(coldBuilds),
    unit: "ms",
    digits: 1,
    target: { max: 100 },
    note: `${coldContext.messages.length} messages, the context measured warm; ${coldBuilds.map((ms) => ms.toFixed(0)).join(", ")} ms`,
  });
  await lightWorkload(daemon, large.sessionId);
  const largePeak = daemon.memory()?.peakMB;

  // ---- token counts the import left out, filled in by the idle daemon ---------------------------
  progress("backfill of the imported session's token counts (idle daemon)");
  const backfill = await waitForBackfill(largeHome, 180_000);
  report({
    name: "token count backfill after the import, idle daemon",
    value: backfill.entries / (backfill.ms / 1000),
    unit: "entries/s",
    digits: 0,
    note:
      backfill.left === 0
        ? `${backfill.entries.toLocaleString("en-US")} counts in ${(backfill.ms / 1000).toFixed(1)} s`
        : `${backfill.left.toLocaleString("en-US")} left after ${(backfill.ms / 1000).toFixed(0)} s`,
  });
  await daemon.stop();

  // ---- cold context/build of a much larger context: the branch with the 2,100 appends -----------
  progress("cold context/build of the branch with the appends");
  daemon = await startDaemon(largeHome);
  const branchBuild = () => daemon.request(P.ContextBuild, { sessionId: large.sessionId, leafId: appendsLeafId });
  const branchStarted = performance.now();
  const branchContext = await branchBuild();
  const branchColdMs = since(branchStarted);
  const branchWarm = await timeRuns(10, branchBuild);
  report({
    name: "context/build of the branch with the 2,100 appends, cold",
    value: branchColdMs,
    unit: "ms",
    digits: 1,
    note: `${branchContext.messages.length} messages, ${(JSON.stringify(branchContext).length / 1e6).toFixed(1)} MB of JSON`,
  });
  report({ name: "  the same, warm (same daemon, p50 of 10)", value: median(branchWarm), unit: "ms", digits: 1 });
  await daemon.stop();

  daemon = await startDaemon(smallHome);
  await lightWorkload(daemon, small.sessionId);
  const smallPeak = daemon.memory()?.peakMB;
  await daemon.stop();
  if (smallPeak !== undefined && largePeak !== undefined) {
    report({ name: "daemon peak RSS, same workload, 1k entries stored", value: smallPeak, unit: "MB", digits: 0 });
    report({ name: "daemon peak RSS, same workload, 114k entries stored", value: largePeak, unit: "MB", digits: 0 });
    report({
      name: "  ratio 114k / 1k",
      value: largePeak / smallPeak,
      digits: 2,
      target: { max: 1.25 },
      note: "memory independent of entries stored",
    });
  }
  if (builderPeak !== undefined) {
    report({ name: "daemon peak RSS while building 10k, importing 100k, 4,100 appends", value: builderPeak, unit: "MB", digits: 0 });
  }
} finally {
  for (const created of homes) created.remove();
}
