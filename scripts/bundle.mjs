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
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const daemon = join(root, "packages", "daemon");
const outdir = join(daemon, "dist", "bundle");

/** Loaded at run time from node_modules, never inlined. */
const EXTERNAL = ["better-sqlite3", "openai", "chokidar", "sucrase", "gpt-tokenizer", "js-tiktoken"];

/** Replaces `import.meta.url` in a daemon source file with the URL of that file's build in dist/. */
const compiledTwinUrl = {
  name: "compiled-twin-url",
  setup(builder) {
    const sources = join(daemon, "src") + sep;
    builder.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(sources)) return undefined;
      const { readFile } = await import("node:fs/promises");
      const text = await readFile(args.path, "utf8");
      if (!text.includes("import.meta.url")) return { contents: text, loader: "ts" };
      const twin = join(daemon, "dist", relative(sources, args.path)).replace(/\.ts$/, ".js");
      const fromBundle = relative(outdir, twin).split(sep).join("/");
      const url = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
      return { contents: text.replaceAll("import.meta.url", url), loader: "ts" };
    });
  },
};

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
  plugins: [compiledTwinUrl, withoutZodLocales],
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
