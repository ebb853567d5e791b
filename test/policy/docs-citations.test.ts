/**
 * A clone must explain itself: code and docs cite the repository's own docs (docs/design.md for
 * the decisions and why, docs/architecture.md, docs/protocol.md, docs/plugins.md), never documents
 * a clone does not have. This scans every tracked text file for citations of such documents, and
 * checks that every `docs/<page>.md#anchor` (and every markdown link with an anchor) names a
 * heading or an `id` that exists in that page.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const SELF = relative(ROOT, import.meta.filename);

/** Documents that lived outside the repository. Built from pieces so this file does not cite them. */
const OUTSIDE_DOCUMENTS: readonly RegExp[] = [
  new RegExp(`\\b${"PRODUCT"}\\.md\\b`),
  new RegExp(`\\b${"PROTOCOL"}\\.md\\b`),
  new RegExp(`\\b${"ARCHITECTURE"}\\.md\\b`),
  new RegExp(`${"seed"}-compaction`, "i"),
  new RegExp(`${"pi-session"}-format`, "i"),
  new RegExp(`\\bthe ${"seed"}\\b|\\b${"seed"}'s\\b|\\b${"seed"} "`, "i"),
];

/** `docs/…` paths that are data (text inside a sample session), not citations. */
const NOT_CITATIONS = new Set(["docs/auth-migration.md"]);

/** What a citation of an outside document looks like in `text`: one line per hit. */
function outsideCitations(text: string): string[] {
  const hits: string[] = [];
  text.split("\n").forEach((line, index) => {
    if (OUTSIDE_DOCUMENTS.some((pattern) => pattern.test(line))) hits.push(`${index + 1}: ${line.trim()}`);
  });
  return hits;
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens (duplicates get -1, -2…). */
function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

/** Every anchor a markdown page offers: its headings (outside code fences) and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const id of line.matchAll(/\b(?:id|name)="([^"]+)"/g)) anchors.add(id[1]!);
  }
  return anchors;
}

interface AnchorCitation {
  /** The cited page, relative to the repository root. */
  readonly page: string;
  readonly anchor: string;
  readonly line: number;
}

/**
 * Anchored citations in a file: `docs/<page>.md#a` anywhere (later `, #b` on the same citation
 * name the same page, also across a comment's line break), and markdown links `(<path>.md#a)` /
 * `(#a)` resolved from the citing file's folder.
 */
function anchorCitations(text: string, file: string): AnchorCitation[] {
  const citations: AnchorCitation[] = [];
  const lineOf = (offset: number) => text.slice(0, offset).split("\n").length;
  for (const match of text.matchAll(/(?<![\w/.-])(?:\.\.\/)*(docs\/[\w./-]+?\.md)((?:#[\w-]+)(?:,\s*(?:\*\s*|\/\/\s*)?#[\w-]+)*)/g)) {
    for (const anchor of match[2]!.matchAll(/#([\w-]+)/g)) {
      citations.push({ page: match[1]!, anchor: anchor[1]!, line: lineOf(match.index!) });
    }
  }
  if (file.endsWith(".md")) {
    for (const match of text.matchAll(/\]\(([^)\s#]*)#([^)\s]+)\)/g)) {
      if (match[1]!.includes("://")) continue;
      const target = match[1] === "" ? file : normalize(join(dirname(file), match[1]!));
      if (!target.endsWith(".md")) continue;
      citations.push({ page: target.split("\\").join("/"), anchor: match[2]!, line: lineOf(match.index!) });
    }
  }
  return citations;
}

/** Folders that are never sources, for a copy of the repository without git (an unpacked archive). */
const NOT_SOURCES = new Set(["node_modules", "dist", ".git", ".ci-results", "coverage"]);

/** The repository's files: tracked ones from git, or every file outside NOT_SOURCES without it. */
function repositoryFiles(): string[] {
  try {
    return execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }).split("\0");
  } catch {
    const files: string[] = [];
    const walk = (folder: string) => {
      for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true })) {
        const path = folder === "" ? entry.name : `${folder}/${entry.name}`;
        if (entry.isDirectory()) {
          if (!NOT_SOURCES.has(entry.name)) walk(path);
        } else if (entry.isFile()) files.push(path);
      }
    };
    walk("");
    return files;
  }
}

/**
 * Session data: pi JSONL files, and the generator of the retention corpus, whose strings are the
 * conversations of made-up projects (their "docs/…" are that project's files, not ours).
 */
function isSessionData(file: string): boolean {
  return file.endsWith(".jsonl") || file.startsWith("examples/sessions/corpus/");
}

/** Every text file worth reading. */
function trackedFiles(): string[] {
  return repositoryFiles()
    .filter((file) => file !== "" && file !== SELF && !isSessionData(file) && existsSync(join(ROOT, file)))
    .filter((file) => !/\.(png|jpe?g|gif|ico|woff2?|lockb)$/i.test(file));
}

function read(file: string): string {
  return readFileSync(join(ROOT, file), "utf8");
}

describe("the scanner", () => {
  it("finds citations of documents a clone does not have", () => {
    const doc = (name: string) => `${name}.md`;
    const seed = "seed";
    const planted = [
      `// see ${doc("PRODUCT")} §5`,
      ` * (${doc("PROTOCOL")} "Errors")`,
      doc("ARCHITECTURE"),
      doc(`${seed}-compaction`),
      doc(`pi-session-${"format"}`),
      `as the ${seed} says`,
      `the ${seed}'s rule`,
    ];
    for (const line of planted) expect(outsideCitations(line), line).toHaveLength(1);
    expect(outsideCitations("docs/protocol.md, docs/architecture.md, generateProse(chars, seed + 1)")).toEqual([]);
  });

  it("turns headings into GitHub's anchors", () => {
    const anchors = anchorsOf(
      '# Design\n## What a context holds\n### `turn/end` & follow-up\n## Validation\n## Validation\n```\n# not a heading\n```\n<a id="log-message"></a>',
    );
    expect([...anchors]).toEqual(["design", "what-a-context-holds", "turnend--follow-up", "validation", "validation-1", "log-message"]);
  });

  it("reads every anchor of a citation, across a comment's line break", () => {
    const text = "/**\n * Where (docs/design.md#range-and-cut-point,\n * #split-turns). See ../../docs/plugins.md#hooks.\n */";
    expect(anchorCitations(text, "x.ts").map((c) => `${c.page}#${c.anchor}@${c.line}`)).toEqual([
      "docs/design.md#range-and-cut-point@2",
      "docs/design.md#split-turns@2",
      "docs/plugins.md#hooks@3",
    ]);
    const links = anchorCitations("[a](design.md#threshold) [b](#cancel) [c](../README.md#try-it)", "docs/architecture.md");
    expect(links.map((c) => `${c.page}#${c.anchor}`)).toEqual([
      "docs/design.md#threshold",
      "docs/architecture.md#cancel",
      "README.md#try-it",
    ]);
  });
});

describe("the repository", () => {
  const files = trackedFiles();
  const texts = new Map(files.map((file) => [file, read(file)] as const));

  it("holds its design record in docs/", () => {
    expect(texts.has("docs/design.md")).toBe(true);
    expect(texts.get("README.md")).toContain("docs/design.md");
    expect(texts.get("docs/architecture.md")).toContain("design.md");
  });

  it("cites no document that is not in it", () => {
    const found: string[] = [];
    for (const [file, text] of texts) for (const hit of outsideCitations(text)) found.push(`${file}:${hit}`);
    expect(found, "cite docs/design.md (or another page in docs/) instead").toEqual([]);
  });

  it("cites only pages that exist, and anchors that are headings of those pages", () => {
    const anchorsByPage = new Map<string, Set<string> | undefined>();
    const anchorsIn = (page: string) => {
      if (!anchorsByPage.has(page)) anchorsByPage.set(page, texts.has(page) ? anchorsOf(texts.get(page)!) : undefined);
      return anchorsByPage.get(page);
    };
    const broken: string[] = [];
    let checked = 0;
    for (const [file, text] of texts) {
      for (const match of text.matchAll(/(?<![\w/.-])(?:\.\.\/)*(docs\/[\w./-]+?\.md)\b/g)) {
        if (!NOT_CITATIONS.has(match[1]!) && !texts.has(match[1]!)) broken.push(`${file}: ${match[1]} is not in the repository`);
      }
      for (const citation of anchorCitations(text, file)) {
        checked += 1;
        const anchors = anchorsIn(citation.page);
        if (!anchors) broken.push(`${file}:${citation.line}: ${citation.page} is not in the repository`);
        else if (!anchors.has(citation.anchor))
          broken.push(`${file}:${citation.line}: ${citation.page} has no heading #${citation.anchor}`);
      }
    }
    expect(broken).toEqual([]);
    // The code cites the design record in many places; a scanner that finds none is broken.
    expect(checked).toBeGreaterThan(50);
  });
});
