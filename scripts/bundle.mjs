// Bundles the daemon and the CLI into one ESM file per entry point (docs/architecture.md#start-path-and-bundles),
// run by the root `build` script after `tsc -b` has type-checked and compiled dist/.
//
// Why: a start from dist/ loads a few hundred modules, and resolving, reading and compiling them
// is most of what a fresh process does before it can answer. One file per entry is read and
// compiled at once; modules an entry only imports dynamically are bundled as functions that run
// on first use.
//
// - Sources are the TypeScript files (source maps point at them), the workspace packages included.
// - Dependencies that are native, optional or only needed later stay external and load from
//   node_modules when first imported: better-sqlite3 (native), openai, chokidar, sucrase and the
//   tokenizers (loaded lazily by the code), vscode-jsonrpc and zod are bundled (needed at once).
// - Code that finds files next to itself (`import.meta.url`: package.json, the plugin worker's
//   scripts, createRequire) is given the URL of its compiled twin in dist/, so it finds them
//   exactly as the unbundled build does. The plugin worker's modules stay unbundled in dist/.
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const daemon = join(root, "packages", "daemon");
const outdir = join(daemon, "dist", "bundle");

/** Loaded at run time from node_modules, never inlined. */
const EXTERNAL = ["better-sqlite3", "pg", "openai", "chokidar", "sucrase", "gpt-tokenizer", "js-tiktoken"];

/** Replaces `import.meta.url` in a daemon source file with the URL of that file's build in dist/. */
function withTwinUrl(path, text) {
  if (!text.includes("import.meta.url")) return text;
  const twin = join(daemon, "dist", relative(join(daemon, "src"), path)).replace(/\.ts$/, ".js");
  const fromBundle = relative(outdir, twin).split(sep).join("/");
  return text.replaceAll("import.meta.url", `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`);
}

/**
 * zod's `z.locales` (error messages in 40-odd languages) is half of zod's code and a fifth of its
 * start-up: nothing here uses it (zod's default English messages come from their own module), so
 * the bundles leave it out.
 */
const withoutZodLocales = {
  name: "without-zod-locales",
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer) ? { path: "zod-locales", namespace: "left-out" } : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: "left-out" }, () => ({ contents: "export {};", loader: "js" }));
  },
};

/**
 * The protocol package's index re-exports every module, so one import from it evaluates every
 * schema. In the bundles, an import of values from "@base-context/protocol" is taken from the
 * modules that define them instead: the code that answers `initialize` evaluates the lifecycle's
 * schemas, and the rest are built when the code that uses them is first loaded (after the reply).
 * An import naming a value the map does not know keeps the index (and all of it is built at once).
 */
function protocolExportMap() {
  const source = join(root, "packages", "protocol", "src");
  const index = readFileSync(join(source, "index.ts"), "utf8");
  const map = new Map();
  const moduleOf = (specifier) => join(source, specifier.replace(/^\.\//, "").replace(/\.js$/, ".ts"));
  for (const [, specifier] of index.matchAll(/^export \* from "([^"]+)";/gm)) {
    const file = moduleOf(specifier);
    const text = readFileSync(file, "utf8");
    for (const [, name] of text.matchAll(/^export (?:declare )?(?:const|let|function\*?|async function|class|enum) (\w+)/gm)) map.set(name, file);
    for (const [, names] of text.matchAll(/^export \{([^}]*)\}(?: from "[^"]+")?;/gm)) {
      for (const part of names.split(",")) {
        const name = part.trim().replace(/^type\s+.*$/, "").split(/\s+as\s+/).pop();
        if (name) map.set(name, file);
      }
    }
  }
  for (const [, names, specifier] of index.matchAll(/^export \{([^}]*)\} from "([^"]+)";/gm)) {
    for (const part of names.split(",")) {
      const name = part.trim();
      if (name && !name.startsWith("type ")) map.set(name, moduleOf(specifier));
    }
  }
  return map;
}

const protocolBySymbol = {
  name: "protocol-by-symbol",
  setup(builder) {
    const exports = protocolExportMap();
    const daemonSources = join(daemon, "src") + sep;
    builder.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(daemonSources)) return undefined;
      let text = readFileSync(args.path, "utf8");
      text = text.replace(/^import \{([^}]*)\} from "@base-context\/protocol";$/gm, (statement, list) => {
        const byModule = new Map();
        for (const part of list.split(",").map((p) => p.trim()).filter(Boolean)) {
          if (part.startsWith("type ")) continue; // erased
          const name = part.split(/\s+as\s+/)[0];
          const file = exports.get(name);
          if (!file) return statement;
          byModule.set(file, [...(byModule.get(file) ?? []), part]);
        }
        return [...byModule].map(([file, parts]) => `import { ${parts.join(", ")} } from ${JSON.stringify(file)};`).join(" ");
      });
      return { contents: withTwinUrl(args.path, text), loader: "ts" };
    });
  },
};

const result = await build({
  entryPoints: {
    daemon: join(daemon, "src", "cli", "serve-main.ts"),
    cli: join(daemon, "src", "cli", "main.ts"),
    help: join(daemon, "src", "cli", "help-main.ts"),
  },
  outdir,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  sourcesContent: false,
  external: EXTERNAL,
  // Workspace packages resolve to their TypeScript sources (a `source`-free package.json points at dist/).
  alias: { "@base-context/protocol": join(root, "packages", "protocol", "src", "index.ts") },
  // Bundled CommonJS (vscode-jsonrpc) calls require() for Node built-ins.
  banner: { js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);' },
  plugins: [protocolBySymbol, withoutZodLocales],
  // Less to read and parse; names are kept (error classes and stack traces show them).
  minifyWhitespace: true,
  metafile: true,
  logLevel: "warning",
  legalComments: "none",
});

if (process.argv.includes("--analyze")) {
  const { analyzeMetafile } = await import("esbuild");
  process.stdout.write(await analyzeMetafile(result.metafile));
}
