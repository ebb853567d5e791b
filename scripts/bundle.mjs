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
//   node_modules when first imported: better-sqlite3's addon (native), openai, chokidar, sucrase and the
//   tokenizers (loaded lazily by the code), vscode-jsonrpc and zod are bundled (needed at once).
// - Code that finds files next to itself (`import.meta.url`: package.json, the plugin loader's
//   hooks and SDK module, createRequire) is given the URL of its compiled twin in dist/, so it
//   finds them exactly as the unbundled build does. Every worker runs the worker bundle
//   (`worker.cjs`); a plugin's hooks and SDK module stay unbundled in dist/ (a plugin imports them).
import { build } from "esbuild";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const daemon = join(root, "packages", "daemon");
const outdir = join(daemon, "dist", "bundle");

/** Loaded at run time from node_modules, never inlined. */
const EXTERNAL = ["pg", "openai", "chokidar", "sucrase", "gpt-tokenizer", "js-tiktoken"];

/** Replaces `import.meta.url` in a daemon source file with the URL of that file's build in dist/. */
function withTwinUrl(path, text) {
  if (!text.includes("import.meta.url")) return text;
  const twin = join(daemon, "dist", relative(join(daemon, "src"), path)).replace(/\.ts$/, ".js");
  const fromBundle = relative(outdir, twin).split(sep).join("/");
  return text.replaceAll("import.meta.url", `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`);
}

/**
 * zod's `z.locales` (error messages in 40-odd languages) is much of zod's code and of its
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
 * better-sqlite3's JavaScript is bundled (loading its CommonJS files and its `bindings` lookup was
 * a daemon's largest start-up cost at its first request; docs/design.md, "Mechanisms kept and
 * dropped"); its native addon is not. The package finds the addon with `bindings`, which
 * looks for the package's root from the caller's file — inside a bundle, the wrong one — so the
 * bundled copy loads the addon from the installed package's root instead.
 */
const betterSqliteAddon = {
  name: "better-sqlite3-addon",
  setup(builder) {
    builder.onLoad({ filter: /[\\/]better-sqlite3[\\/]lib[\\/]database\.js$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      const call = "require('bindings')('better_sqlite3.node')";
      if (!text.includes(call)) throw new Error(`${args.path}: no ${call} to point at the installed addon`);
      // build/Release is where its install puts the addon; `bindings` (which tries other places,
      // each failure a thrown error) only when it is not there.
      const loaded = `((root) => {
        try {
          return require(root + "/build/Release/better_sqlite3.node");
        } catch (error) {
          if (error.code !== "MODULE_NOT_FOUND") throw error;
          return require("node:module").createRequire(root + "/lib/database.js")("bindings")({ bindings: "better_sqlite3.node", module_root: root });
        }
      })(require("node:path").dirname(require.resolve("better-sqlite3/package.json")))`;
      return { contents: text.replace(call, loaded), loader: "js" };
    });
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

/**
 * The daemon's sources as the bundles see them: protocol values imported from the modules that
 * define them (above), `import.meta.url` their compiled twin's. With `importThroughLoader`, an
 * `import("pkg")` of an external package becomes `__bundleImport("pkg")`: code compiled from V8's
 * code cache on Node 20 loses the callback `import()` needs inside a `vm.Script`, so the loader
 * (cli/code-cache.ts) passes a function that imports from outside the script; an `import("node:…")`
 * of a built-in becomes a `require` of it.
 */
const daemonSources = ({ importThroughLoader }) => ({
  name: "daemon-sources",
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
      if (importThroughLoader) {
        text = text.replace(/(?<!typeof )\bimport\((["'])([^"']+)\1\)/g, (call, _quote, specifier) =>
          EXTERNAL.includes(specifier) ? `__bundleImport(${JSON.stringify(specifier)})` : call,
        );
        // A Node built-in loaded on first use: required (the bundle is CommonJS), which neither
        // needs the import callback nor starts Node's ES module loader. Named imports only.
        text = text.replace(/\bawait import\((["'])(node:[^"']+)\1\)/g, (_call, _quote, specifier) => `await Promise.resolve(require(${JSON.stringify(specifier)}))`);
      }
      return { contents: withTwinUrl(args.path, text), loader: "ts" };
    });
  },
});

/** What every bundle is built with. */
const common = {
  outdir,
  bundle: true,
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  sourcesContent: false,
  // better-sqlite3/package.json: found at run time, where the addon is (betterSqliteAddon).
  external: [...EXTERNAL, "better-sqlite3/package.json"],
  // Workspace packages resolve to their TypeScript sources (a `source`-free package.json points at dist/).
  alias: { "@base-context/protocol": join(root, "packages", "protocol", "src", "index.ts") },
  // Less to read and parse; names are kept (error classes and stack traces show them).
  minifyWhitespace: true,
  metafile: true,
  logLevel: "warning",
  legalComments: "none",
};

rmSync(outdir, { recursive: true, force: true }); // earlier bundles, and code caches written beside them

/**
 * The CLI's bundles: ESM, run by bin/base-context.js through `import()`.
 * Bundled CommonJS (vscode-jsonrpc) calls require() for Node built-ins.
 */
const cli = build({
  ...common,
  entryPoints: { cli: join(daemon, "src", "cli", "main.ts"), help: join(daemon, "src", "cli", "help-main.ts") },
  format: "esm",
  plugins: [daemonSources({ importThroughLoader: false }), withoutZodLocales, betterSqliteAddon],
  banner: {
    js:
      'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);' +
      'const __workerBundle = new URL("./worker.cjs", import.meta.url).href;',
  },
});

/** A CommonJS bundle of the daemon's code, whose `import.meta.url` is the bundle's own URL (`__bundleUrl`). */
const commonJs = {
  ...common,
  format: "cjs",
  outExtension: { ".js": ".cjs" },
  define: { "import.meta.url": "__bundleUrl" },
};
const BUNDLE_URL = '"use strict";const __bundleUrl=require("node:url").pathToFileURL(__filename).href;';

/**
 * The bundles cli/code-cache.ts compiles with V8's code cache (an ES module cannot be given one on
 * Node 20): CommonJS. In CommonJS, what a module imports (Node's built-ins, better-sqlite3) is
 * required when the importing module first runs, not all at start as an ES module's static imports
 * are. `import.meta.url` is the bundle's own URL.
 */
const codeCached = (entryPoints) =>
  build({
    ...commonJs,
    entryPoints,
    plugins: [daemonSources({ importThroughLoader: true }), withoutZodLocales, betterSqliteAddon],
    banner: {
      js:
        BUNDLE_URL +
        'const __bundleImport=typeof __import==="function"?__import:(specifier)=>import(specifier);' +
        'const __workerBundle=new URL("./worker.cjs",__bundleUrl).href;',
    },
  });

/** The daemon's bundle. */
const serve = codeCached({ daemon: join(daemon, "src", "cli", "serve-main.ts") });
/** The Claude Code hook's (cli/claude-code-hook-main.ts): Claude Code waits for it at every compaction. */
const hook = codeCached({ "claude-code-hook": join(daemon, "src", "cli", "claude-code-hook-main.ts") });

/**
 * Every worker's bundle (workers/start-worker.ts): the one entry, each kind's module evaluated
 * when that kind starts. CommonJS like the daemon's, so a worker starts no ES module loader of
 * its own unless it imports one (a plugin). The bundles above name it in `__workerBundle`.
 */
const worker = build({
  ...commonJs,
  entryPoints: { worker: join(daemon, "src", "cli", "worker-main.ts") },
  plugins: [daemonSources({ importThroughLoader: false }), withoutZodLocales, betterSqliteAddon],
  banner: { js: BUNDLE_URL },
});

/**
 * What bin/base-context.js runs for `serve` and `claude-code hook`: the loaders that compile the
 * daemon's and the hook's bundles with their code cache.
 */
const loader = build({
  ...common,
  entryPoints: {
    serve: join(daemon, "src", "cli", "serve-loader.ts"),
    hook: join(daemon, "src", "cli", "claude-code-hook-loader.ts"),
  },
  format: "cjs",
  outExtension: { ".js": ".cjs" },
  // The bundles beside them, which they compile themselves.
  external: [...common.external, "./daemon.cjs", "./claude-code-hook.cjs"],
  plugins: [daemonSources({ importThroughLoader: false })],
});

const results = await Promise.all([cli, serve, loader, worker, hook]);
for (const [file, output] of Object.entries({ ...results[1].metafile.outputs, ...results[4].metafile.outputs })) {
  const left = output.imports.filter((imported) => imported.kind === "dynamic-import" && imported.external);
  if (left.length > 0) throw new Error(`${file}: import() of ${left.map((i) => i.path).join(", ")} would fail from the code cache (see daemonSources)`);
}
const result = { metafile: { inputs: {}, outputs: {} } };
for (const { metafile } of results) {
  Object.assign(result.metafile.inputs, metafile.inputs);
  Object.assign(result.metafile.outputs, metafile.outputs);
}

if (process.argv.includes("--analyze")) {
  const { analyzeMetafile } = await import("esbuild");
  process.stdout.write(await analyzeMetafile(result.metafile));
}
