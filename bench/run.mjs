// Runs the benchmarks, one child process per area (so each one's peak RSS is its own), and prints
// a table per area with targets and PASS/MISS. `pnpm bench` builds first; `node bench/run.mjs
// tokens daemon` runs only the named areas (against the current build).
//
// A bench file reports rows through bench/lib/report.mjs; anything it prints on stdout is shown
// under its table. It fails when it exits non-zero; a row fails when it misses its target.
//
// Each area's table is also written to bench/results/<area>.md, with the date, the machine and
// the load when it ran: the measured figures live there (docs state the targets and link them),
// and the next run of that area replaces them.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { formatTable, verdict } from "./lib/table.mjs";

const here = dirname(fileURLToPath(import.meta.url));

const AREAS = [
  { name: "tokens", file: "tokens.mjs", what: "token counting: throughput, start-up, event-loop stalls" },
  { name: "startup", file: "startup.mjs", what: "spawn → initialize, first context/build, daemon RSS, CLI latency" },
  { name: "daemon", file: "daemon.mjs", what: "the daemon over stdio: appends, context/build, memory, import" },
  { name: "import", file: "import.mjs", what: "session/import MB/s: 100 MB of Claude Code transcripts against 100 MB of pi JSONL" },
  { name: "claude-code", file: "claude-code.mjs", what: "the Claude Code hook: first time on 5 MB; one turn new at 5 and 50 MB, beside --help" },
  { name: "contention", file: "contention.mjs", what: "several writers on one database (four daemons flat out, two at an agent's pace, one socket daemon): append latency" },
  { name: "postgres", file: "postgres.mjs", what: "the same rows on SQLite and on PostgreSQL through a 1 ms delay proxy; the 100k pi import on loopback; socket neighbours; four daemons on one server" },
  { name: "memory", file: "memory.mjs", what: "daemon RSS after initialize, after idle, peak under load (fresh processes)" },
  { name: "compaction", file: "compaction.mjs", what: "compaction/prepare and compaction/run on large sessions" },
  { name: "extractive", file: "extractive.mjs", what: "the offline extractive summarizer" },
  { name: "retention", file: "retention.mjs", what: "what summaries keep of the retention corpus (docs/retention.md)" },
  { name: "quality", file: "quality.mjs", what: "summaries of the labelled real sessions scored against the labels (../shared/corpus)" },
  { name: "plugins", file: "plugins.mjs", what: "the plugin host: hook round trip, hot reload" },
  { name: "bounded", file: "bounded.mjs", what: "slow and hostile clients: unread replies (RSS, other clients' latency), 50 MB where a short string belongs" },
  { name: "protocol", file: "protocol.mjs", what: "limits: memory of a large entry, a refused one, a refused 2^40 Content-Length" },
  { name: "prune", file: "prune.mjs", what: "the prune rung: tokens saved next to summaries, model calls auto avoids" },
];

const REPORT_FD = 3;

function runArea(area) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, ["--import", join(here, "lib", "peak-rss.mjs"), join(here, area.file)], {
      stdio: ["ignore", "pipe", "inherit", "pipe"],
      env: { ...process.env, BENCH_REPORT_FD: String(REPORT_FD) },
    });
    const rows = [];
    let peakRssMB;
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (text) => (output += text));
    createInterface({ input: child.stdio[REPORT_FD] }).on("line", (line) => {
      const message = JSON.parse(line);
      if (message.row) rows.push(message.row);
      if (message.peakRssMB !== undefined) peakRssMB = message.peakRssMB;
    });
    child.on("close", (code, signal) => {
      resolve({ rows, peakRssMB, output: output.trim(), code, signal, seconds: (performance.now() - started) / 1000 });
    });
  });
}

/**
 * `node -e 0`, a process that does nothing, whole (median of 5, ms): taken before and after each
 * area and written beside its figures, for scale. A figure of this shared machine means something
 * only next to what the machine did meanwhile; the areas' targets are ratios to a peer measured in
 * the same run where the machine moves a figure more than the code does.
 */
function bareNodeMs() {
  const times = Array.from({ length: 5 }, () => {
    const started = performance.now();
    spawnSync(process.execPath, ["-e", "0"]);
    return performance.now() - started;
  });
  return times.sort((a, b) => a - b)[2];
}

function machineInfo() {
  const cpu = cpus();
  return [
    `machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown cpu"}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    `node ${process.version} on ${process.platform}-${process.arch}, ${new Date().toISOString()}`,
  ].join("\n");
}

/** Writes bench/results/<area>.md: what ran where and when, then the table and the area's notes. */
function writeResults(area, result, machine, loadBefore) {
  const folder = join(here, "results");
  mkdirSync(folder, { recursive: true });
  const bare = `node -e 0 (a process that does nothing, for scale): ${result.bareBefore.toFixed(0)} ms before, ${result.bareAfter.toFixed(0)} ms after`;
  const load = `load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after; ${bare}`;
  const lines = [
    `# bench area \`${area.name}\``,
    "",
    `${area.what}. Written by \`pnpm bench\` (\`node bench/run.mjs ${area.name}\`); the next run replaces it.`,
    "",
    "```",
    machine,
    `${load}; ${result.seconds.toFixed(1)} s${result.code === 0 ? "" : `; FAILED (${result.signal ?? `exit code ${result.code}`})`}`,
    "```",
    "",
    "```",
    formatTable(result.rows),
    "```",
  ];
  if (result.output) lines.push("", "```", result.output, "```");
  writeFileSync(join(folder, `${area.name}.md`), lines.join("\n") + "\n");
}

async function main() {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !AREAS.some((area) => area.name === name));
  if (unknown.length > 0) {
    process.stderr.write(`unknown bench area(s): ${unknown.join(", ")}; known: ${AREAS.map((a) => a.name).join(", ")}\n`);
    return 2;
  }
  const areas = wanted.length > 0 ? AREAS.filter((area) => wanted.includes(area.name)) : AREAS;
  const machine = machineInfo();
  process.stdout.write(`${machine}\n`);

  let passed = 0;
  let missed = 0;
  const failedAreas = [];
  const started = performance.now();
  for (const area of areas) {
    process.stdout.write(`\n== ${area.name}: ${area.what}\n`);
    const loadBefore = loadavg()[0];
    const bareBefore = bareNodeMs();
    const result = { ...(await runArea(area)), bareBefore, bareAfter: bareNodeMs() };
    // An area that failed before reporting anything leaves the last results as they were.
    if (result.rows.length > 0) writeResults(area, result, machine, loadBefore);
    if (result.rows.length > 0) process.stdout.write(formatTable(result.rows) + "\n");
    if (result.output) process.stdout.write(result.output.replace(/^/gm, "  ") + "\n");
    const rss = result.peakRssMB === undefined ? "" : `, bench process peak RSS ${result.peakRssMB.toFixed(0)} MB`;
    const bare = `; node -e 0: ${result.bareBefore.toFixed(0)} ms before, ${result.bareAfter.toFixed(0)} ms after`;
    process.stdout.write(`(${result.seconds.toFixed(1)} s${rss}${bare})\n`);
    for (const row of result.rows) {
      const outcome = verdict(row);
      if (outcome === "PASS") passed++;
      if (outcome === "MISS") missed++;
    }
    if (result.code !== 0) {
      failedAreas.push(area.name);
      process.stdout.write(`!! ${area.name} failed (${result.signal ?? `exit code ${result.code}`})\n`);
    }
  }

  const seconds = (performance.now() - started) / 1000;
  const failures = failedAreas.length > 0 ? `; failed: ${failedAreas.join(", ")}` : "";
  process.stdout.write(`\n${passed} PASS, ${missed} MISS${failures} — ${seconds.toFixed(0)} s in all\n`);
  return missed > 0 || failedAreas.length > 0 ? 1 : 0;
}

process.exitCode = await main();
