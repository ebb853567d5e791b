// Removes compiled files that no source of the project produces any more (a moved, deleted or
// newly excluded file: `tsc -b` never deletes outputs), so `dist/` — what `pnpm pack` ships — holds
// only what the sources build today. Run by `pnpm build` after `tsc -b`, with the project folders.
//
// What the project builds is read from its `dist/.tsbuildinfo` (the program's file names). Only
// compiler output is touched: a file counts as such when a `.d.ts` of the same name sits next to it
// (every build here emits declarations), so anything else a tool writes into dist/ is left alone.
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";

const OUTPUT_SUFFIXES = [".js", ".js.map", ".d.ts", ".d.ts.map"];

/** `dist/a/b` for every `src/a/b.ts` the project compiles. */
function builtStems(project) {
  const dist = join(project, "dist");
  const info = JSON.parse(readFileSync(join(dist, ".tsbuildinfo"), "utf8"));
  const src = resolve(project, "src") + sep;
  const stems = new Set();
  for (const name of info.fileNames ?? []) {
    const file = resolve(dist, name);
    if (!file.startsWith(src) || file.endsWith(".d.ts") || !/\.[cm]?tsx?$/.test(file)) continue;
    stems.add(join(dist, relative(src, file)).replace(/\.[cm]?tsx?$/, ""));
  }
  return stems;
}

/** Removes stale outputs under `dir` (adding them to `removed`); true when `dir` is left empty. */
function prune(dir, stems, removed) {
  const entries = readdirSync(dir, { withFileTypes: true });
  const stale = [];
  let left = entries.length;
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (prune(path, stems, removed)) {
        rmdirSync(path);
        left--;
      }
      continue;
    }
    const suffix = OUTPUT_SUFFIXES.find((candidate) => entry.name.endsWith(candidate));
    if (suffix === undefined) continue;
    const stem = path.slice(0, -suffix.length);
    const compiled = suffix === ".d.ts.map" || existsSync(`${stem}.d.ts`);
    if (compiled && !stems.has(stem)) stale.push(path);
  }
  // Decided above, removed here: a stem's .d.ts marks its other files while they are judged.
  for (const path of stale) rmSync(path, { force: true });
  removed.push(...stale);
  return left - stale.length === 0;
}

let total = 0;
for (const project of process.argv.slice(2)) {
  const dist = join(project, "dist");
  if (!existsSync(join(dist, ".tsbuildinfo"))) continue;
  const removed = [];
  prune(dist, builtStems(project), removed);
  total += removed.length;
  for (const path of removed) console.error(`prune-dist: removed stale ${relative(process.cwd(), path)}`);
}
if (total > 0) console.error(`prune-dist: ${total} stale file(s) removed`);
