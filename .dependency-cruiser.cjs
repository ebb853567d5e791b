/**
 * The import rules of the layers (docs/architecture.md#layers-and-the-rules-that-check-them),
 * checked by dependency-cruiser in `pnpm lint` (part of `pnpm test`). Paths are relative to the
 * repository root; type-only imports count like any other.
 */

/** The pure core, its own package (@base-context/core). */
const CORE = "^packages/core/src/";
/** The daemon's own sources. */
const DAEMON = "^packages/daemon/src/";
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
