// Finds measured timings in the comments of the shipped sources (packages/*/src, tests left out,
// and scripts/): a duration (ms, µs, s) said with a word of measurement ("~4 ms", "cost 10 ms",
// "took 5 s", "from 17 to 8 ms", "p99 …"). Figures go to bench results (bench/results/), which
// `pnpm bench` rewrites; a comment says why, and a design value (a timeout, a pause) stays.
// Used by test/measured-timings.test.ts; run on its own, it prints the lines it finds.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const DURATION = /\d(?:[\d.,]*\d)?\s?(?:–\s?\d[\d.,]*\s?)?(?:ms|µs|us|s|seconds?)\b/;
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
    } else if (/\.(ts|mjs|cjs)$/.test(entry.name) && !/\.test\.ts$|test-support\.ts$|\.d\.ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** `file:line: comment` for each comment line stating a measured timing. */
export function measuredTimings(root) {
  const dirs = [...readdirSync(join(root, "packages")).map((name) => join("packages", name, "src")), "scripts"];
  const hits = [];
  for (const dir of dirs) {
    let files;
    try {
      files = sourceFiles(root, dir);
    } catch {
      continue;
    }
    for (const file of files) {
      if (file === SELF) continue;
      let previous = { line: 0, comment: "" };
      for (const current of commentLines(readFileSync(join(root, file), "utf8"))) {
        // The words of measurement may stand on the comment's line before ("… costs roughly / 100 ms").
        const context = current.line === previous.line + 1 ? `${previous.comment} ${current.comment}` : current.comment;
        if (DURATION.test(current.comment) && MEASURED.test(context)) hits.push(`${file}:${current.line}: ${current.comment.trim()}`);
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
