#!/usr/bin/env node
/**
 * No function longer than 100 lines (docs/architecture.md#layers-and-the-rules-that-check-them):
 * a function a reader cannot hold at once is split into named pieces. A function's length is the
 * lines from its first to its last, comments and blank lines included (they are read too).
 *
 * A test suite's `describe(…, () => { … })` callback is a list of cases, not a function anyone
 * reads as one: it is not measured (the tests inside it are). Every other function is, tests'
 * helpers and `it(…)` callbacks included.
 *
 * Usage: node scripts/lint/function-length.mjs [--max N] [path …]   (default: the files
 * line-length.mjs checks). Exit 1 when a function is too long.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import ts from "typescript";
import { lintArguments } from "./line-length.mjs";

export const MAX_FUNCTION_LINES = 100;

/**
 * Functions known to be too long whose split is another piece of work under way, by `file:name`,
 * with who does it. Each must still be too long: once split, its line here fails the check too,
 * so the list only shrinks.
 */
const BEING_SPLIT = new Map([]);

const FUNCTIONS = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
]);

/** `describe(…)`, `describe.each(…)(…)`, `describe.skip(…)` …: the call a suite's callback is given to. */
function isSuiteCall(node) {
  if (!ts.isCallExpression(node)) return false;
  let callee = node.expression;
  while (ts.isCallExpression(callee) || ts.isPropertyAccessExpression(callee)) callee = callee.expression;
  return ts.isIdentifier(callee) && callee.text === "describe";
}

/** A name for the function at `node`, for the message. */
function functionName(node) {
  if (node.name !== undefined) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText();
  if (ts.isCallExpression(parent)) return `a callback of ${parent.expression.getText().slice(0, 40)}`;
  return "an anonymous function";
}

/** The too-long functions of one file's text: `{ line, lines, name }` (line 1-based). */
export function longFunctions(fileName, text, max = MAX_FUNCTION_LINES) {
  const kind = /\.[cm]?ts$/.test(fileName) ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
  const found = [];
  const visit = (node) => {
    if (FUNCTIONS.has(node.kind) && node.body !== undefined && !isSuiteCall(node.parent)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (last - first + 1 > max) found.push({ line: first + 1, lines: last - first + 1, name: functionName(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function main(argv) {
  const { max, files, named } = lintArguments(argv, MAX_FUNCTION_LINES);
  let count = 0;
  const pending = new Set(named ? [] : BEING_SPLIT.keys());
  for (const file of files) {
    for (const { line, lines, name } of longFunctions(file, readFileSync(file, "utf8"), max)) {
      const key = `${file}:${name}`;
      if (pending.delete(key)) {
        process.stderr.write(`${file}:${line}: ${name} is ${lines} lines long, left to ${BEING_SPLIT.get(key)}\n`);
        continue;
      }
      count++;
      process.stderr.write(`${file}:${line}: ${name} is ${lines} lines long, more than ${max}\n`);
    }
  }
  for (const key of pending) {
    count++;
    process.stderr.write(`${key} is no longer too long (or gone): remove it from BEING_SPLIT in scripts/lint/function-length.mjs\n`);
  }
  if (count > 0) {
    process.stderr.write(`${count} function(s) longer than ${max} lines: split them into named pieces\n`);
    return 1;
  }
  return 0;
}

const invoked = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) process.exitCode = main(process.argv.slice(2));
