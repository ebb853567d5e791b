// session/import rate per MB: Claude Code transcripts against pi JSONL, 100 MB of each. The
// Claude Code side is the corpus's real transcripts (../shared/corpus, beside the clone), copied
// under new session ids and uuids into a temporary folder until they make 100 MB, and imported
// file by file as `base-context import --all claude-code` does; the pi side is one generated
// 100 MB pi file (as in daemon.mjs). Target: Claude Code at no less than pi's MB/s. Then the
// re-import of the same transcripts, unchanged (what a hook after every turn costs).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { daemonMain, repoRoot } from "./lib/dist.mjs";
import { progress, report } from "./lib/report.mjs";
import { since } from "./lib/stats.mjs";

if (!existsSync(daemonMain)) {
  process.stdout.write(`the daemon is not built (${daemonMain} is missing): run \`pnpm build\`\n`);
  process.exit(1);
}
const CORPUS = join(repoRoot, "..", "shared", "corpus");
const sources = existsSync(CORPUS) ? readdirSync(CORPUS).filter((name) => /^cc-[0-9a-f-]+\.jsonl$/.test(name)) : [];
if (sources.length === 0) {
  process.stdout.write(`no Claude Code transcripts in ${CORPUS}: the import bench needs the corpus beside the clone\n`);
  process.exit(1);
}

const { protocol: P, startDaemon, temporaryHome, waitForBackfill } = await import("./lib/daemon-process.mjs");
const { writePiSession } = await import("./lib/generated-session.mjs");

const TARGET_BYTES = 100 * 1e6;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** A transcript under new ids: every uuid (session, lines, parents) gets copy number `copy` in its last 12 digits. */
function renamed(text, copy) {
  const suffix = copy.toString(16).padStart(6, "0");
  return text.replace(UUID, (uuid) => `${uuid.slice(0, 30)}${suffix}`);
}

const work = temporaryHome("import");
try {
  // ---- 100 MB of Claude Code transcripts ------------------------------------------------------
  const folder = join(work.path, "claude", "projects", "-bench-project");
  mkdirSync(folder, { recursive: true });
  const texts = sources.map((name) => readFileSync(join(CORPUS, name), "utf8"));
  let ccBytes = 0;
  const files = [];
  for (let copy = 0; ccBytes < TARGET_BYTES; copy++) {
    const text = renamed(texts[copy % texts.length], copy);
    const file = join(folder, `copy-${copy}.jsonl`);
    writeFileSync(file, text);
    files.push(file);
    ccBytes += Buffer.byteLength(text);
  }
  progress(`importing ${(ccBytes / 1e6).toFixed(0)} MB of Claude Code transcripts (${files.length} files)`);
  const ccHome = temporaryHome("import-cc");
  let daemon = await startDaemon(ccHome.path);
  let entries = 0;
  const ccStarted = performance.now();
  for (const path of files) entries += (await daemon.request(P.SessionImport, { path, format: "claude-code-jsonl" })).entryCount;
  const ccMs = since(ccStarted);
  await waitForBackfill(ccHome.path, 600_000);
  progress("importing the same transcripts again, unchanged");
  const againStarted = performance.now();
  let added = 0;
  for (const path of files) added += (await daemon.request(P.SessionImport, { path })).addedEntries ?? 0;
  const againMs = since(againStarted);
  await daemon.stop();
  ccHome.remove();

  // ---- 100 MB of pi JSONL ------------------------------------------------------------------------
  progress("writing a 100 MB pi JSONL file");
  const piFile = join(work.path, "generated-session.jsonl");
  // ~2.9 KB per line, as in daemon.mjs: 34k entries make 100 MB.
  const piBytes = await writePiSession(piFile, 34_500, { bytesPerEntry: 2640 });
  const piHome = temporaryHome("import-pi");
  daemon = await startDaemon(piHome.path);
  progress(`importing ${(piBytes / 1e6).toFixed(0)} MB of pi JSONL`);
  const piStarted = performance.now();
  const pi = await daemon.request(P.SessionImport, { path: piFile, format: "pi-jsonl" });
  const piMs = since(piStarted);
  await daemon.stop();
  piHome.remove();

  const ccRate = ccBytes / 1e6 / (ccMs / 1000);
  const piRate = piBytes / 1e6 / (piMs / 1000);
  report({
    name: `session/import of ${(piBytes / 1e6).toFixed(0)} MB pi JSONL (one file, ${pi.entryCount.toLocaleString("en-US")} entries)`,
    value: piRate,
    unit: "MB/s",
    digits: 1,
    note: `${(piMs / 1000).toFixed(1)} s`,
  });
  report({
    name: `session/import of ${(ccBytes / 1e6).toFixed(0)} MB Claude Code transcripts (${files.length} files, ${entries.toLocaleString("en-US")} entries)`,
    value: ccRate,
    unit: "MB/s",
    digits: 1,
    note: `${(ccMs / 1000).toFixed(1)} s`,
  });
  report({ name: "Claude Code import rate ÷ pi import rate (per MB)", value: ccRate / piRate, unit: "×", digits: 2, target: { min: 1 } });
  report({
    name: `re-import of the same ${files.length} transcripts, unchanged (${added} entries added)`,
    value: againMs / 1000,
    unit: "s",
    digits: 1,
    note: `${(ccBytes / 1e6 / (againMs / 1000)).toFixed(0)} MB/s read`,
  });
} finally {
  work.remove();
}
