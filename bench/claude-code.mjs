// The Claude Code hook (`base-context claude-code hook`, docs/claude-code.md): what it adds to a
// compaction, whole process, on a generated 5 MB transcript (bench/lib/claude-code-transcript.mjs:
// turns with an edit, a failing test and a reply). Targets: PreCompact within 5 s on a transcript
// never imported (a fresh home), within 1 s once imported (the turn's new lines only), and the same
// for SessionStart after Claude Code's compaction. `node -e 0` beside, for scale. Median of
// BENCH_HOOK_RUNS runs (default 5).
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
const BYTES = 5e6;

/** One hook run, whole process: its wall time in ms (it must answer and exit 0). */
function hook(home, transcript, event) {
  const input = JSON.stringify({
    session_id: "bench",
    transcript_path: transcript,
    hook_event_name: event,
    ...(event === "PreCompact" ? { trigger: "auto", custom_instructions: null } : { source: "compact" }),
  });
  const started = performance.now();
  const run = spawnSync(process.execPath, [daemonBin, "claude-code", "hook"], { input, env: { ...process.env, BASE_CONTEXT_HOME: home }, encoding: "utf8" });
  const ms = performance.now() - started;
  if (run.status !== 0 || run.stderr !== "" || run.stdout === "") throw new Error(`the ${event} hook failed (${run.status}): ${run.stderr}`);
  return ms;
}

const ms = (values) => values.map((value) => value.toFixed(0)).join(", ");
const homes = [];
try {
  const bare = Array.from({ length: RUNS }, () => {
    const started = performance.now();
    spawnSync(process.execPath, ["-e", "0"]);
    return performance.now() - started;
  });
  report({ name: "node -e 0 (whole process, for scale)", value: median(bare), unit: "ms", digits: 0, note: `${ms(bare)} ms` });

  progress(`PreCompact on a ${BYTES / 1e6} MB transcript, first time (a fresh home each run)`);
  const first = [];
  const again = [];
  let state;
  let transcript;
  for (let run = 0; run < RUNS; run++) {
    const home = temporaryHome("claude-code-hook");
    homes.push(home);
    transcript = join(home.path, "transcript.jsonl");
    state = writeClaudeTranscript(transcript, { bytes: BYTES });
    first.push(hook(home.path, transcript, "PreCompact"));
    // The next compaction of the same session: a turn more, then the hook again.
    appendTurns(state, 1);
    again.push(hook(home.path, transcript, "PreCompact"));
  }
  report({ name: `PreCompact, ${BYTES / 1e6} MB transcript never imported`, value: median(first), unit: "ms", digits: 0, target: { max: 5000 }, note: `${ms(first)} ms` });
  report({ name: `PreCompact, ${BYTES / 1e6} MB transcript imported, one turn new`, value: median(again), unit: "ms", digits: 0, target: { max: 1000 }, note: `${ms(again)} ms` });

  progress("SessionStart after Claude Code's compaction, transcript imported");
  const home = homes[homes.length - 1].path;
  appendCompaction(state);
  hook(home, transcript, "SessionStart");
  const after = Array.from({ length: RUNS }, () => hook(home, transcript, "SessionStart"));
  report({ name: `SessionStart (compact), ${BYTES / 1e6} MB transcript imported`, value: median(after), unit: "ms", digits: 0, target: { max: 1000 }, note: `${ms(after)} ms` });
} finally {
  for (const home of homes) home.remove();
}
