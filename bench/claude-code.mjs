// The Claude Code hook (`base-context claude-code hook`, docs/claude-code.md): what it adds to a
// compaction, whole process, on generated transcripts (bench/lib/claude-code-transcript.mjs: turns
// with an edit, a failing test and a reply, and one of Claude Code's compactions after every
// 600 KB of turns, as Claude Code compacts near its context window). Rows, median of
// BENCH_HOOK_RUNS runs (default 5), the runs of one row interleaved with the others' so each sees
// the same load:
// - `node -e 0` and `base-context --help`, whole process: the scale the targets are set against;
// - PreCompact on a 5 MB transcript never imported (a fresh home each run): within 5 s;
// - PreCompact on an imported transcript with one new turn, at 5 MB and at 50 MB: each at most 3×
//   `--help`, and the two within 20 % of each other (the hook reads what is new, not the file);
// - SessionStart after Claude Code's compaction, on the 5 MB transcript.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { daemonBin, repoRoot } from "./lib/dist.mjs";
import { progress, report } from "./lib/report.mjs";
import { median } from "./lib/stats.mjs";
import { temporaryHome } from "./lib/daemon-process.mjs";
import { appendCompaction, appendTurns, writeClaudeTranscript } from "./lib/claude-code-transcript.mjs";

if (!existsSync(join(repoRoot, "packages", "daemon", "dist", "bundle", "cli.js"))) {
  process.stdout.write("the CLI bundle is not built: run `pnpm build`\n");
  process.exit(1);
}
const RUNS = Number(process.env.BENCH_HOOK_RUNS ?? 5);
const COMPACT_EVERY = 600_000;

/** A whole process's wall time in ms; it must exit 0 (and, for the hook, answer and say nothing on stderr). */
function timed(args, { env = process.env, input, answers = false } = {}) {
  const started = performance.now();
  const run = spawnSync(process.execPath, args, { input, env, encoding: "utf8" });
  const ms = performance.now() - started;
  if (run.status !== 0 || (answers && (run.stderr !== "" || run.stdout === ""))) {
    throw new Error(`${args.join(" ")} failed (${run.status}): ${run.stderr}`);
  }
  return ms;
}

function hook(home, transcript, event) {
  const input = JSON.stringify({
    session_id: "bench",
    transcript_path: transcript,
    hook_event_name: event,
    ...(event === "PreCompact" ? { trigger: "auto", custom_instructions: null } : { source: "compact" }),
  });
  return timed([daemonBin, "claude-code", "hook"], { env: { ...process.env, BASE_CONTEXT_HOME: home }, input, answers: true });
}

/** A transcript of `bytes` in a home of its own, imported there by `base-context import` (no deadline). */
function imported(bytes) {
  const home = temporaryHome("claude-code-hook");
  const transcript = join(home.path, "transcript.jsonl");
  const state = writeClaudeTranscript(transcript, { bytes, compactEvery: COMPACT_EVERY });
  timed([daemonBin, "import", transcript], { env: { ...process.env, BASE_CONTEXT_HOME: home.path } });
  return { home, transcript, state };
}

const ms = (values) => values.map((value) => value.toFixed(0)).join(", ");
const homes = [];
try {
  progress("PreCompact on a 5 MB transcript, first time (a fresh home each run)");
  const first = [];
  for (let run = 0; run < RUNS; run++) {
    const home = temporaryHome("claude-code-hook");
    homes.push(home);
    const transcript = join(home.path, "transcript.jsonl");
    writeClaudeTranscript(transcript, { bytes: 5e6, compactEvery: COMPACT_EVERY });
    first.push(hook(home.path, transcript, "PreCompact"));
  }

  progress("5 MB and 50 MB transcripts, imported");
  const small = imported(5e6);
  const large = imported(50e6);
  homes.push(small.home, large.home);
  const rows = { bare: [], help: [], small: [], large: [] };
  for (let run = 0; run < RUNS; run++) {
    rows.bare.push(timed(["-e", "0"]));
    rows.help.push(timed([daemonBin, "--help"]));
    // The next compaction of each session: a turn more, then the hook.
    appendTurns(small.state, 1);
    rows.small.push(hook(small.home.path, small.transcript, "PreCompact"));
    appendTurns(large.state, 1);
    rows.large.push(hook(large.home.path, large.transcript, "PreCompact"));
  }
  const help = median(rows.help);
  report({ name: "node -e 0 (whole process, for scale)", value: median(rows.bare), unit: "ms", digits: 0, note: `${ms(rows.bare)} ms` });
  report({ name: "base-context --help (whole process)", value: help, unit: "ms", digits: 0, note: `${ms(rows.help)} ms` });
  report({ name: "PreCompact, 5 MB transcript never imported", value: median(first), unit: "ms", digits: 0, target: { max: 5000 }, note: `${ms(first)} ms` });
  for (const [size, values] of [["5 MB", rows.small], ["50 MB", rows.large]]) {
    report({ name: `PreCompact, ${size} transcript imported, one turn new`, value: median(values), unit: "ms", digits: 0, note: `${ms(values)} ms` });
    report({ name: `  the same ÷ --help`, value: median(values) / help, unit: "×", digits: 2, target: { max: 3 } });
  }
  const apart = Math.max(median(rows.large) / median(rows.small), median(rows.small) / median(rows.large));
  report({ name: "PreCompact 50 MB against 5 MB (the larger ÷ the smaller)", value: apart, unit: "×", digits: 2, target: { max: 1.2 } });

  progress("SessionStart after Claude Code's compaction, transcript imported");
  appendCompaction(small.state);
  hook(small.home.path, small.transcript, "SessionStart");
  const after = Array.from({ length: RUNS }, () => hook(small.home.path, small.transcript, "SessionStart"));
  report({ name: "SessionStart (compact), 5 MB transcript imported", value: median(after), unit: "ms", digits: 0, target: { max: 1000 }, note: `${ms(after)} ms` });
} finally {
  for (const home of homes) home.remove();
}
