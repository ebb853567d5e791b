#!/usr/bin/env node
/**
 * Lines of code at most 140 characters (Biome has a formatter width but no lint rule for it).
 *
 * The text of a single string, template or regular-expression literal does not count: a long
 * message, prompt or pattern cannot be wrapped without changing it, so only the code around it
 * must fit (as with a formatter, which never breaks a literal). Comments count in full.
 *
 * Usage: node scripts/lint/line-length.mjs [--max N] [path …]   (default: every tracked and new,
 * not ignored .ts/.mts/.cts/.js/.mjs/.cjs file of the repository). Exit 1 when a line is too long.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";

export const MAX_LINE_LENGTH = 140;
const SOURCE = /\.(?:[cm]?ts|[cm]?js)$/;
const LITERALS = new Set([
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateHead,
  ts.SyntaxKind.TemplateMiddle,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.RegularExpressionLiteral,
]);

/** The too-long lines of one file's text: `{ line, length }` (1-based; length without literal text). */
export function longLines(fileName, text, max = MAX_LINE_LENGTH) {
  const lines = text.split("\n");
  if (!lines.some((line) => line.length > max)) return [];
  const kind = fileName.endsWith("ts") ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
  const starts = [];
  let offset = 0;
  for (const line of lines) {
    starts.push(offset);
    offset += line.length + 1;
  }
  // Characters of literal text on each line (the quotes and `${` `}` count as code).
  const literalChars = new Array(lines.length).fill(0);
  const visit = (node) => {
    if (LITERALS.has(node.kind)) {
      const start = node.getStart(source) + 1;
      const end = node.getEnd() - 1;
      for (let line = source.getLineAndCharacterOfPosition(start).line; line < lines.length && starts[line] < end; line++) {
        const from = Math.max(start, starts[line]);
        const to = Math.min(end, starts[line] + lines[line].length);
        if (to > from) literalChars[line] += to - from;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  const found = [];
  lines.forEach((line, index) => {
    const length = line.length - literalChars[index];
    if (line.length > max && length > max) found.push({ line: index + 1, length });
  });
  return found;
}

/** Generated or installed folders, for a tree that is not a git checkout. */
const SKIPPED = new Set([".git", "node_modules", "dist", "coverage", ".ci-results", ".bench-data"]);

export function sourceFiles(root) {
  let listed;
  try {
    const options = { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] };
    listed = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], options).split("\n");
  } catch {
    listed = readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => relative(root, resolve(entry.parentPath ?? entry.path, entry.name)))
      .filter((path) => !path.split("/").some((part) => SKIPPED.has(part)));
  }
  // A file in conflict is listed once per merge stage: check it once.
  return [...new Set(listed)].filter((path) => SOURCE.test(path) && !path.endsWith(".d.ts"));
}

/**
 * A lint script's arguments, `[--max N] [path …]`: the limit, the files to check (those given,
 * relative to the working folder, or every source file), and whether they were given.
 */
export function lintArguments(argv, defaultMax) {
  let max = defaultMax;
  const paths = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--max") max = Number(argv[++i]);
    else paths.push(argv[i]);
  }
  const root = process.cwd();
  const files = paths.length > 0 ? paths.map((path) => relative(root, resolve(path))) : sourceFiles(root);
  return { max, files, named: paths.length > 0 };
}

function main(argv) {
  const { max, files } = lintArguments(argv, MAX_LINE_LENGTH);
  let count = 0;
  for (const file of files) {
    for (const { line, length } of longLines(file, readFileSync(file, "utf8"), max)) {
      count++;
      process.stderr.write(`${file}:${line}: line is ${length} characters of code, more than ${max}\n`);
    }
  }
  if (count > 0) {
    process.stderr.write(`${count} line(s) longer than ${max} characters (literal text not counted): wrap them\n`);
    return 1;
  }
  return 0;
}

const invoked = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) process.exitCode = main(process.argv.slice(2));
