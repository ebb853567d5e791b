#!/usr/bin/env node
/**
 * Wraps the lines that scripts/lint/line-length.mjs refuses, and only those: each file with such a
 * line is formatted by Biome (scripts/lint/wrap-format.jsonc, the code's own style at 140
 * characters), and of the formatter's changes only those that replace a too-long line are kept,
 * so the rest of the file keeps its hand-made layout. The result must parse to the same syntax
 * tree as before (strings compared by value); otherwise the file is left as it was and named.
 * Lines still too long afterwards (a long literal with code around it, a long comment) are for a
 * person to wrap.
 *
 * Usage: node scripts/lint/wrap-long-lines.mjs [path …]   (default: every file the check reads)
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { longLines, MAX_LINE_LENGTH, sourceFiles } from "./line-length.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const BIOME = join(HERE, "../../node_modules/@biomejs/biome/bin/biome");

function formatted(path, text) {
  return execFileSync(process.execPath, [BIOME, "format", `--config-path=${join(HERE, "wrap-format.jsonc")}`, `--stdin-file-path=${path}`], {
    input: text,
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
}

/** Runs of lines that differ between `a` and `b`, from a longest common subsequence of lines. */
function changedRuns(a, b) {
  const n = a.length;
  const m = b.length;
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1] + 1 : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  const runs = [];
  let i = 0;
  let j = 0;
  let run;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      if (run) runs.push(run);
      run = undefined;
      i++;
      j++;
      continue;
    }
    run ??= { a1: i, a2: i, b1: j, b2: j };
    if (j < m && (i === n || lcs[i * width + j + 1] >= lcs[(i + 1) * width + j])) run.b2 = ++j;
    else run.a2 = ++i;
  }
  if (run) runs.push(run);
  return runs;
}

/** The syntax tree as a list of node kinds, names and literal values. */
function shape(fileName, text) {
  const kind = /ts$/.test(fileName) ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
  if (source.parseDiagnostics.length > 0) return undefined;
  const out = [];
  const visit = (node) => {
    if (node.kind !== ts.SyntaxKind.ParenthesizedExpression && node.kind !== ts.SyntaxKind.ParenthesizedType) {
      let label = String(node.kind);
      if (node.kind === ts.SyntaxKind.StringLiteral) label += `:${JSON.stringify(node.text)}`;
      else if (ts.isIdentifier(node) || ts.isLiteralExpression(node) || ts.isTemplateLiteralKind(node.kind)) {
        label += `:${node.getText(source)}`;
      }
      out.push(label);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out.join("\n");
}

/** The wrapped text of one file, or undefined when nothing could be wrapped safely. */
export function wrapLongLines(path, text, format = formatted) {
  const lines = text.split("\n");
  const tooLong = new Set(longLines(path, text).map(({ line }) => line - 1));
  if (tooLong.size === 0) return undefined;
  const target = format(path, text).split("\n");
  const out = [];
  let at = 0;
  for (const run of changedRuns(lines, target)) {
    out.push(...lines.slice(at, run.a1));
    let long = false;
    for (let line = run.a1; line < run.a2; line++) long ||= tooLong.has(line);
    out.push(...(long ? target.slice(run.b1, run.b2) : lines.slice(run.a1, run.a2)));
    at = run.a2;
  }
  out.push(...lines.slice(at));
  const wrapped = out.join("\n");
  if (wrapped === text || shape(path, wrapped) !== shape(path, text)) return undefined;
  return wrapped;
}

function main(argv) {
  const files = argv.length > 0 ? argv : sourceFiles(process.cwd());
  let unsafe = 0;
  for (const path of files) {
    const text = readFileSync(path, "utf8");
    if (longLines(path, text).length === 0) continue;
    const wrapped = wrapLongLines(path, text);
    if (wrapped === undefined) {
      unsafe++;
      process.stderr.write(`${path}: not wrapped (nothing the formatter can wrap, or wrapping would change the code)\n`);
      continue;
    }
    writeFileSync(path, wrapped);
    process.stdout.write(`${path}: wrapped\n`);
  }
  process.stdout.write(`Run \`node scripts/lint/line-length.mjs\` for what is left over ${MAX_LINE_LENGTH} characters.\n`);
  return unsafe > 0 ? 1 : 0;
}

const invoked = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) process.exitCode = main(process.argv.slice(2));
