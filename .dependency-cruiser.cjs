/**
 * The import rules of the layers (docs/architecture.md#layers-and-the-rules-that-check-them),
 * checked by dependency-cruiser in `pnpm lint` (part of `pnpm test`). Paths are relative to the
 * repository root; type-only imports count like any other.
 */

/** The pure core, its own package (@base-context/core). */
const CORE = "^packages/core/src/";
/** The daemon's own sources. */
const DAEMON = "^packages/daemon/src/";
/** A folder of the daemon (a layer or a service), as a path pattern. */
const folders = (...names) => `${DAEMON}(${names.join("|")})/`;
/** Any folder of the daemon but `names`. */
const foldersBut = (...names) => `${DAEMON}(?!(${names.join("|")})/)[^/]+/`;
/**
 * The daemon's leaf modules, which every layer may use: errors, logging, ids, paths, the version,
 * lazily loaded built-ins, the workers' message envelope, fd 1's guard, special files' stat.
 */
const LEAF_MODULES = `${DAEMON}(errors|log|ids|paths|version|lazy-node|worker-messages|fd1-guard|special-file-stat)\\.ts$`;
/** Test code may reach any layer to set up and inspect what it tests. */
const TEST_CODE = "(\\.test\\.ts$|(^|/)test-support\\.ts$|/fixtures/|^test/)";

/** Node modules that do I/O (files, sockets, processes, threads, the terminal). */
const NODE_IO = [
  "fs", "fs/promises", "net", "child_process", "worker_threads", "cluster", "dgram", "dns", "dns/promises", "http", "http2",
  "https", "tls", "readline", "readline/promises", "repl", "tty", "inspector", "os", "v8", "vm", "process", "module",
];
/** Packages that do I/O: the database, the model's HTTP client, file watching, the JSON-RPC transport. */
const PACKAGES_IO = ["better-sqlite3", "openai", "chokidar", "vscode-jsonrpc"];

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No import cycles anywhere: a cycle means two modules are one, or a piece lives in the wrong layer.",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-imports-no-io-module",
      severity: "error",
      comment: "The core is pure algorithms: no file, socket, process, thread, database, model client or watcher.",
      from: { path: CORE },
      to: {
        dependencyTypes: ["core"],
        path: `^(node:)?(${NODE_IO.join("|")})$`,
      },
    },
    {
      name: "core-imports-no-io-package",
      severity: "error",
      comment: "The core is pure algorithms: no file, socket, process, thread, database, model client or watcher.",
      from: { path: CORE },
      to: { path: `(^|/)node_modules/(${PACKAGES_IO.join("|")})/` },
    },
    {
      name: "core-imports-nothing-of-the-daemon",
      severity: "error",
      comment:
        "The core depends on the protocol package only, never on the daemon's layers (store/, sessions/, server/, plugins/ …), " +
        "which is what lets the plugin SDK use it without the daemon.",
      from: { path: CORE },
      to: { path: DAEMON, pathNot: CORE },
    },
    {
      name: "sdk-imports-no-daemon",
      severity: "error",
      comment:
        "The plugin SDK is installed alone by plugin authors: it builds on the protocol and the core, never on the daemon " +
        "(which would pull SQLite, the model client and the watcher into every plugin's install).",
      from: { path: "^packages/plugin-sdk/src/", pathNot: TEST_CODE },
      to: { path: "(^packages/daemon/|(^|/)node_modules/(@base-context/daemon|better-sqlite3|openai|chokidar)/)" },
    },
    {
      name: "only-cli-imports-server",
      severity: "error",
      comment:
        "server/ (the connection, the serving lifecycle) is started by the `serve` command only; nothing else serves. " +
        "Test code may import it to test it.",
      from: { pathNot: [`${DAEMON}(cli|server)/`, TEST_CODE] },
      to: { path: `${DAEMON}server/` },
    },
    {
      name: "store-only-through-sessions",
      severity: "error",
      comment:
        "The store (SQL) is reached through sessions/ only: SessionService and the SessionRecords it hands out. " +
        "Exceptions: daemon.ts, the wiring, creates the SessionStore it hands to SessionService (and secures the home " +
        "folder before anything opens it); cli/worker-main.ts, the one worker entry, runs the store's threads (the " +
        "checkpointer, the PostgreSQL bridge). Test code may open a store to set up and inspect what it tests.",
      from: { pathNot: [`${DAEMON}(store|sessions)/`, `${DAEMON}daemon\\.ts$`, `${DAEMON}cli/worker-main\\.ts$`, TEST_CODE] },
      to: { path: `${DAEMON}store/` },
    },
    {
      name: "leaf-modules-import-no-layer",
      severity: "error",
      comment:
        "The leaf modules (errors, log, ids, paths, version …) and workers/ (how a worker starts) are used by every layer, " +
        "so they import none: a leaf that imported a layer would make that layer import itself through it.",
      from: { path: [LEAF_MODULES, folders("workers")], pathNot: TEST_CODE },
      to: { path: foldersBut("workers") },
    },
    {
      name: "store-imports-no-layer-above",
      severity: "error",
      comment:
        "store/ (the SQL) is a bottom layer: it imports the protocol, the leaf modules and workers/ (its threads), never " +
        "tokens/ beside it, sessions/, a service, the wiring or the server (the layer table of docs/architecture.md).",
      from: { path: folders("store"), pathNot: TEST_CODE },
      to: { path: foldersBut("store", "workers") },
    },
    {
      name: "store-engines-stay-apart",
      severity: "error",
      comment:
        "store/sqlite/ and store/postgres/ are the two engines: neither imports the other; what both need (the engine " +
        "interface, the search text, a too-new schema's error …) is engine-neutral and lives at store/.",
      from: { path: "^packages/daemon/src/store/(sqlite|postgres)/", pathNot: TEST_CODE },
      to: { path: "^packages/daemon/src/store/(sqlite|postgres)/", pathNot: "^packages/daemon/src/store/$1/" },
    },
    {
      name: "tokens-imports-no-layer-above",
      severity: "error",
      comment:
        "tokens/ (counting) is a bottom layer beside store/: it imports the leaf modules and workers/ (its thread), never " +
        "store/, sessions/ (which joins the two), a service, the wiring or the server.",
      from: { path: folders("tokens"), pathNot: TEST_CODE },
      to: { path: foldersBut("tokens", "workers") },
    },
    {
      name: "sessions-imports-no-service",
      severity: "error",
      comment:
        "sessions/ is the door to the store: it builds on store/ and tokens/ only, never on a service (compaction, " +
        "plugins …), the wiring or the server, which all build on it.",
      from: { path: folders("sessions"), pathNot: TEST_CODE },
      to: { path: foldersBut("sessions", "store", "tokens") },
    },
    {
      name: "summarizer-imports-no-service",
      severity: "error",
      comment:
        "summarizer/ (the models) is what the pipelines build on: it imports no service (settings/ included: the services " +
        "hand it the settings it needs), nor sessions/, the wiring or the server.",
      from: { path: folders("summarizer"), pathNot: TEST_CODE },
      to: { path: foldersBut("summarizer") },
    },
    {
      name: "settings-imports-no-service",
      severity: "error",
      comment: "settings/ (the files and their merge) is read by every service: it imports none, nor sessions/, the wiring or the server.",
      from: { path: folders("settings"), pathNot: TEST_CODE },
      to: { path: foldersBut("settings") },
    },
    {
      name: "hooks-import-only-the-summarizer",
      severity: "error",
      comment:
        "hooks/ holds the hook points that compaction/ and tree/ declare and plugins/ implements: types over the protocol, " +
        "naming the client's model (summarizer/), nothing of the pipelines or the plugin host.",
      from: { path: folders("hooks"), pathNot: TEST_CODE },
      to: { path: foldersBut("hooks", "summarizer") },
    },
    {
      name: "plugins-imports-no-pipeline",
      severity: "error",
      comment:
        "The plugin host runs hooks; it knows the hook points (hooks/) and the settings' defaults, never the pipelines " +
        "that call them (compaction/, tree/, context/), the summarizer, sessions/ or tokens/: the wiring hands it what it needs.",
      from: { path: folders("plugins"), pathNot: TEST_CODE },
      to: { path: foldersBut("plugins", "hooks", "settings", "workers") },
    },
    {
      name: "pipelines-import-no-plugins",
      severity: "error",
      comment:
        "compaction/, tree/ and context/ call their hooks through the interfaces of hooks/, never the plugin host: " +
        "the daemon without plugins, a test or a stateless summary hands them other implementations.",
      from: { path: folders("compaction", "tree", "context"), pathNot: TEST_CODE },
      to: { path: folders("plugins") },
    },
    {
      name: "only-cli-and-server-import-the-wiring",
      severity: "error",
      comment:
        "daemon.ts and daemon-plugins.ts build a daemon from the services: only what runs one (cli/, server/) imports them; " +
        "a service that did would depend on every other.",
      from: { pathNot: [folders("cli", "server"), `${DAEMON}daemon(-plugins)?\\.ts$`, TEST_CODE] },
      to: { path: `${DAEMON}daemon(-plugins)?\\.ts$` },
    },
    {
      name: "nothing-imports-cli",
      severity: "error",
      comment: "cli/ is the top: the command and the bundles' entries (the daemon's, the workers'). Nothing imports it.",
      from: { pathNot: [folders("cli"), TEST_CODE] },
      to: { path: folders("cli") },
    },
    {
      name: "no-unresolvable-import",
      severity: "error",
      comment:
        "An import the checker cannot resolve is one it cannot check: the rules above would pass blind. " +
        "(The workspace packages resolve to their built dist/, so lint runs after the build.)",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(dist|coverage)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".d.ts", ".json"],
    },
  },
};
