// Finds measured figures in the comments of the shipped code (packages/*/src and packages/*/bin,
// tests left out), of scripts/ and of the workspace's configuration files (vitest.config.ts,
// .dependency-cruiser.cjs …): a duration (ms, µs, s) or a size (KB, MB …) said with a word of
// measurement ("~4 ms", "cost 10 ms", "took 5 s", "from 17 to 8 ms", "p99 …", "~80 MB"), or a
// proportion that can only have been measured ("a quarter of a daemon's start", "twice as
// much", "3x faster", "40 %"). Figures go to bench results (bench/results/), which `pnpm bench`
// rewrites; a comment says why, and a design value (a timeout, a pause, a limit) stays.
// Part of `pnpm lint`, tested by test/policy/measured-timings.test.ts; it prints the lines it finds.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const DURATION = /\d(?:[\d.,]*\d)?\s?(?:–\s?\d[\d.,]*\s?)?(?:ms|µs|us|s|seconds?)\b/;
const SIZE = /\d(?:[\d.,]*\d)?\s?(?:–\s?\d[\d.,]*\s?)?(?:[KMG]i?B|%)(?!\w)/;
/** A share of something only a measurement gives ("a quarter of a daemon's start", "half of zod's code"). */
const SHARE =
  /\b(?:(?:a|one)\s+(?:half|third|quarter|fifth|tenth)|half)\s+(?:of|less|more)\b(?:\s+\S+){0,3}?\s+(?:start|start-up|startup|time|CPU|memory|RSS|heap|code|cost|load|work)\b/i;
/** A comparison only a measurement gives ("costs twice as much", "3x faster"). */
const COMPARISON = /\b(?:twice|thrice|\d+(?:\.\d+)?\s?(?:x|×|times))\s+(?:as\s+(?:much|long|fast|slow|many)|more|less|faster|slower|larger|smaller|fewer)\b/i;
const MEASURED = /\d\s?[–-]\s?\d[\d.,]*\s?(?:ms|µs|s)\b|~\s?\d|\babout\s+\d|\btook\b|\btakes\b|\bcosts?\b|\bcost\b|→|\bwas\b|\bwere\b|\bfaster\b|\bslower\b|\bhalved\b|\bmeasured\b|\bp50\b|\bp99\b|\bmedian\b|\bbefore\b.*\bafter\b|\bfrom\s+\d[^ ]*\s+(?:ms\s+)?to\s+\d/i;

/** The comment text of each line of `text` (block and line comments), by line number. */
function commentLines(text) {
  const lines = text.split("\n");
  const found = [];
  let inBlock = false;
  lines.forEach((line, index) => {
    let comment = "";
    if (inBlock) {
      const end = line.indexOf("*/");
      comment = end === -1 ? line : line.slice(0, end);
      inBlock = end === -1;
    } else {
      const start = line.indexOf("/*");
      const slashes = line.search(/(^|[^:])\/\//);
      if (start !== -1 && (slashes === -1 || start < slashes)) {
        const end = line.indexOf("*/", start + 2);
        comment = end === -1 ? line.slice(start) : line.slice(start, end);
        inBlock = end === -1;
      } else if (slashes !== -1) comment = line.slice(slashes);
    }
    if (comment) found.push({ line: index + 1, comment });
  });
  return found;
}

const SELF = join("scripts", "lint", "measured-timings.mjs");

function sourceFiles(root, dir, out = []) {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!["node_modules", "dist", "fixtures"].includes(entry.name)) sourceFiles(root, path, out);
    } else if (/\.(ts|js|mjs|cjs)$/.test(entry.name) && !/\.test\.ts$|test-support\.ts$|\.d\.ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** The workspace's configuration files with code in them, at its root. */
const CONFIG_FILE = /^(?:[\w.-]+\.config\.(?:[cm]?[jt]s)|\.[\w.-]+\.c?js|[\w.-]+\.jsonc)$/;

/** `file:line: comment` for each comment line stating a measured figure. */
export function measuredTimings(root) {
  const packages = readdirSync(join(root, "packages"));
  const dirs = [...packages.flatMap((name) => [join("packages", name, "src"), join("packages", name, "bin")]), "scripts"];
  const hits = [];
  const configs = readdirSync(root).filter((name) => CONFIG_FILE.test(name));
  for (const dir of [...dirs, "."]) {
    let files;
    try {
      files = dir === "." ? configs : sourceFiles(root, dir);
    } catch {
      continue;
    }
    for (const file of files) {
      if (file === SELF) continue;
      let previous = { line: 0, comment: "" };
      for (const current of commentLines(readFileSync(join(root, file), "utf8"))) {
        // The words of measurement may stand on the comment's line before ("… costs roughly / 100 ms").
        const context = current.line === previous.line + 1 ? `${previous.comment} ${current.comment}` : current.comment;
        const figure = DURATION.test(current.comment) || SIZE.test(current.comment);
        const share = SHARE.test(context) && !SHARE.test(previous.comment);
        const measured = (figure && MEASURED.test(context)) || share || COMPARISON.test(current.comment);
        if (measured) hits.push(`${file}:${current.line}: ${current.comment.trim()}`);
        previous = current;
      }
    }
  }
  return hits;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(fileURLToPath(new URL(".", import.meta.url)), "..", "..");
  const hits = measuredTimings(root);
  for (const hit of hits) process.stdout.write(`${relative(root, join(root, hit))}\n`);
  process.exitCode = hits.length > 0 ? 1 : 0;
}
