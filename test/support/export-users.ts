/**
 * Who imports each export of the packages' sources, read from the import statements of every file of
 * the repository (packages, examples, bench, scripts, tests): `import { a } from "./x.js"`,
 * `export { a } from`, `export * from`, namespace imports and `await import("./x.js")` with the
 * names destructured. A user is a file that imports the name from that very module: an index
 * re-exporting it is the user of the module that declares it, and the index's own importers its.
 *
 * Text, not the type checker: what it cannot see (a namespace import passed around whole, an
 * `import()` kept as a module object) counts as using every export of that module.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import ts from "typescript";

export interface ExportUse {
  /** The declaring file, relative to the repository root. */
  file: string;
  name: string;
  /** A value (function, class, constant) or only a type (interface, type alias). */
  kind: "value" | "type";
  /** Files that import it from this module. */
  users: string[];
  /** Re-exported from another module (an index's `export { a } from`), not declared here. */
  reexport: boolean;
}

const SOURCE = /\.(ts|mts|cts|mjs|cjs|js)$/;
const SKIPPED_DIRS = new Set(["node_modules", "dist", "dist-bench", ".git", ".ci-results", "coverage"]);

function listFiles(root: string, dir: string, out: string[]): void {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) listFiles(root, join(dir, entry.name), out);
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(join(dir, entry.name));
  }
}

/** Where `specifier` imported from `from` leads, as a file relative to the root (undefined: outside the repository's sources). */
function resolveSpecifier(root: string, from: string, specifier: string, packages: Map<string, string>): string | undefined {
  let target: string;
  if (specifier.startsWith(".")) target = join(dirname(from), specifier).replace(/^packages\/([^/]+)\/dist(-bench)?\//, "packages/$1/src/");
  else {
    const entry = packages.get(specifier);
    if (entry === undefined) return undefined;
    target = entry;
  }
  const candidates = [target, target.replace(/\.js$/, ".ts"), target.replace(/\.mjs$/, ".mts"), `${target}.ts`, join(target, "index.ts")];
  for (const candidate of candidates) {
    const full = join(root, candidate);
    if (existsSync(full) && statSync(full).isFile()) return relative(root, full).split(sep).join("/");
  }
  return undefined;
}

function names(list: string): { imported: string; local: string }[] {
  return list
    .split(",")
    .map((part) => part.trim().replace(/^type\s+/, ""))
    .filter((part) => part.length > 0)
    .map((part) => {
      const [imported, local] = part.split(/\s+as\s+/);
      return { imported: imported!.trim(), local: (local ?? imported)!.trim() };
    });
}

const printer = ts.createPrinter({ removeComments: true });

/**
 * The file's code without its comments, printed from its syntax tree: a regular expression would
 * take the `/*` of a glob in a string ("**\/*.jsonl") for a comment and hide the code after it.
 */
export function withoutComments(file: string, text: string): string {
  const kind = /\.[cm]?ts$/.test(file) ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  return printer.printFile(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind));
}

interface ModuleInfo {
  declared: Set<string>;
  types: Set<string>;
  /** name → [module, name there] */
  reexports: Map<string, [string, string]>;
  /** `export * from` targets */
  star: string[];
}

/** What every file exports and imports, read from its text. */
class ExportIndex {
  readonly modules = new Map<string, ModuleInfo>();
  /** uses[file] = set of `module#name` (or `module#*`) */
  readonly uses = new Map<string, Set<string>>();

  constructor(
    private readonly root: string,
    private readonly packageEntries: Map<string, string>,
  ) {}

  private resolve(file: string, specifier: string): string | undefined {
    return resolveSpecifier(this.root, file, specifier, this.packageEntries);
  }

  private moduleOf(file: string): ModuleInfo {
    let info = this.modules.get(file);
    if (!info) {
      info = { declared: new Set(), types: new Set(), reexports: new Map(), star: [] };
      this.modules.set(file, info);
    }
    return info;
  }

  private use(user: string, module: string, name: string): void {
    if (!this.uses.has(user)) this.uses.set(user, new Set());
    this.uses.get(user)!.add(`${module}#${name}`);
  }

  /** The names `file` declares and re-exports. */
  scanExports(file: string, text: string): void {
    const info = this.moduleOf(file);
    const declaration = /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|const|let|var|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm;
    for (const [whole, name] of text.matchAll(declaration)) {
      info.declared.add(name!);
      if (/\b(interface|type)\s+[\w$]+$/.test(whole)) info.types.add(name!);
    }
    for (const [, list] of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}\s*;/gm)) for (const { local } of names(list!)) info.declared.add(local);
    for (const [, list, specifier] of text.matchAll(/\bexport\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["']([^"']+)["']/g)) {
      const target = this.resolve(file, specifier!);
      if (target) {
        for (const { imported, local } of names(list!)) {
          info.reexports.set(local, [target, imported]);
          this.use(file, target, imported);
        }
      }
    }
    for (const [, specifier] of text.matchAll(/\bexport\s+\*\s+from\s*["']([^"']+)["']/g)) {
      const target = this.resolve(file, specifier!);
      if (target) {
        info.star.push(target);
        this.use(file, target, "*");
      }
    }
  }

  /** What `file` imports, statically or not, and from which module. */
  scanImports(file: string, text: string): void {
    for (const [, list, specifier] of text.matchAll(/\bimport\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\s*["']([^"']+)["']/g)) {
      const target = this.resolve(file, specifier!);
      if (target) for (const { imported } of names(list!)) this.use(file, target, imported);
    }
    for (const [, local, specifier] of text.matchAll(/\bimport\s+(?:type\s+)?\*\s+as\s+([\w$]+)\s+from\s*["']([^"']+)["']/g)) {
      const target = this.resolve(file, specifier!);
      if (!target) continue;
      const members = [...text.matchAll(new RegExp(`\\b${local}\\.([\\w$]+)`, "g"))].map((m) => m[1]!);
      const whole = text.split(new RegExp(`\\b${local}\\b(?!\\.)`)).length - 2 > 0;
      if (whole) this.use(file, target, "*");
      for (const member of members) this.use(file, target, member);
    }
    for (const [, destructured, specifier] of text.matchAll(/(?:\{([^{}]*)\}\s*=\s*)?(?:await\s+)?import\(\s*["']([^"']+)["']\s*\)/g)) {
      const target = this.resolve(file, specifier!);
      if (!target) continue;
      if (destructured === undefined) this.use(file, target, "*");
      else for (const { imported } of names(destructured.replace(/:\s*[\w$]+/g, ""))) this.use(file, target, imported);
    }
    // The benches' loaders of built modules: `const { a } = await daemonModule("tokens/index.js")`.
    for (const [, destructured, loader, path] of text.matchAll(/(?:\{([^{}]*)\}\s*=\s*)?(?:await\s+)?(daemonModule|fixtureModule)\(\s*["']([^"']+)["']\s*\)/g)) {
      const target = this.resolve("packages/daemon/src/x", `./${path}`);
      if (!target || loader === undefined) continue;
      if (destructured === undefined) this.use(file, target, "*");
      else for (const { imported } of names(destructured.replace(/:\s*[\w$]+/g, ""))) this.use(file, target, imported);
    }
    // Destructured parts of a Promise.all of imports: `[{ A }, { B }] = await Promise.all([import("x"), import("y")])`.
    for (const [, parts, calls] of text.matchAll(/\[((?:\s*\{[^}]*\}\s*,?)+)\]\s*=\s*await\s+Promise\.all\(\[([^\]]*)\]\)/g)) {
      const lists = [...parts!.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]!);
      const specifiers = [...calls!.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]!);
      specifiers.forEach((specifier, i) => {
        const target = this.resolve(file, specifier);
        if (target && lists[i] !== undefined) for (const { imported } of names(lists[i]!)) this.use(file, target, imported);
      });
    }
  }

  /** Every name `module` exports: its own, those it re-exports by name, and those of its `export *` targets. */
  exportedNames(module: string, seen = new Set<string>()): Set<string> {
    const found = new Set<string>();
    const info = this.modules.get(module);
    if (!info || seen.has(module)) return found;
    seen.add(module);
    for (const name of info.declared) found.add(name);
    for (const name of info.reexports.keys()) found.add(name);
    for (const star of info.star) for (const name of this.exportedNames(star, seen)) found.add(name);
    return found;
  }

  /** Whether `name`, as `module` exports it, is only a type (followed to its declaration). */
  isType(module: string, name: string, seen = new Set<string>()): boolean {
    const info = this.modules.get(module);
    if (!info || seen.has(module)) return false;
    seen.add(module);
    if (info.declared.has(name)) return info.types.has(name);
    const reexport = info.reexports.get(name);
    if (reexport) return this.isType(reexport[0], reexport[1], seen);
    return info.star.some((star) => this.exportedNames(star).has(name) && this.isType(star, name, seen));
  }

  /** Every export with the files that use it. */
  exportUses(): ExportUse[] {
  const result: ExportUse[] = [];
  for (const module of this.modules.keys()) {
    for (const name of this.exportedNames(module)) {
      const users = [...this.uses]
        .filter(([user, used]) => user !== module && (used.has(`${module}#${name}`) || used.has(`${module}#*`)))
        .map(([user]) => user);
      const reexport = !this.modules.get(module)!.declared.has(name);
      result.push({ file: module, name, kind: this.isType(module, name) ? "type" : "value", users: users.sort(), reexport });
    }
  }
  return result.sort((a, b) => (a.file === b.file ? a.name.localeCompare(b.name) : a.file.localeCompare(b.file)));
  }
}

/** The exports of every file of `roots` (folders relative to `root`), and the files that import each. */
export function exportUsers(root: string, roots: string[], packages: Record<string, string>): ExportUse[] {
  const files: string[] = [];
  for (const dir of roots) if (existsSync(join(root, dir))) listFiles(root, dir, files);
  const texts = new Map(files.map((file) => [file.split(sep).join("/"), withoutComments(file, readFileSync(join(root, file), "utf8"))]));
  const index = new ExportIndex(root, new Map(Object.entries(packages)));
  for (const [file, text] of texts) {
    index.scanExports(file, text);
    index.scanImports(file, text);
  }
  return index.exportUses();
}

/** A public member of a class of the packages' sources, and the files that read it. */
export interface MemberUse {
  file: string;
  className: string;
  name: string;
  /** Files (its own included) where `.name` is read or called. */
  users: string[];
}

const PUBLIC_MEMBERS = new Set([ts.SyntaxKind.MethodDeclaration, ts.SyntaxKind.GetAccessor, ts.SyntaxKind.PropertyDeclaration]);
/** Modifiers of a member that is not part of its class's public face. */
const HIDDEN = new Set([ts.SyntaxKind.PrivateKeyword, ts.SyntaxKind.ProtectedKeyword, ts.SyntaxKind.StaticKeyword]);

/** The public members of the classes of `files`, by name: not private, protected or `#`, not static. */
function classMembers(file: string, text: string): { className: string; name: string }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { className: string; name: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) && node.name) {
      for (const member of node.members) {
        if (!PUBLIC_MEMBERS.has(member.kind) || !member.name || !ts.isIdentifier(member.name)) continue;
        const modifiers = ts.canHaveModifiers(member) ? (ts.getModifiers(member) ?? []) : [];
        if (modifiers.some((modifier) => HIDDEN.has(modifier.kind))) continue;
        found.push({ className: node.name.text, name: member.name.text });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The public members of every class declared in `shipped` files, with the files of `roots` that
 * read them (`.name`, `?.name`, or `{ name } =` of an instance): by name, not by type, so a member
 * whose name another class's member shares counts as read where either is.
 */
export function memberUsers(root: string, roots: string[], shipped: (file: string) => boolean): MemberUse[] {
  const files: string[] = [];
  for (const dir of roots) if (existsSync(join(root, dir))) listFiles(root, dir, files);
  const texts = new Map(files.map((file) => [file.split(sep).join("/"), withoutComments(file, readFileSync(join(root, file), "utf8"))]));
  const result: MemberUse[] = [];
  for (const file of texts.keys()) {
    if (!shipped(file) || !file.endsWith(".ts")) continue;
    for (const { className, name } of classMembers(file, readFileSync(join(root, file), "utf8"))) {
      const read = new RegExp(`(?:\\.|\\?\\.)${name}(?![\\w$])|\\{[^}]*(?<![\\w$])${name}(?![\\w$:])[^}]*\\}\\s*=`);
      const users = [...texts].filter(([, other]) => read.test(other)).map(([user]) => user);
      result.push({ file, className, name, users: users.sort() });
    }
  }
  return result;
}
