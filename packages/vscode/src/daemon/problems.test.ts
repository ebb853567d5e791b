import { describe, expect, it } from "vitest";
import { errorCode, problemFor, requestErrorText } from "./problems.js";

describe("problemFor", () => {
  it("a command that is not found: install it or name it in the settings, and do not retry", () => {
    const problem = problemFor({ kind: "spawn", command: "base-context", code: "ENOENT", message: "spawn base-context ENOENT" });
    expect(problem.message).toContain("the command `base-context` was not found");
    expect(problem.message).toContain("(cd packages/daemon && npm link)");
    expect(problem.message).toContain("`baseContext.daemon.command`");
    expect(problem).toMatchObject({ actions: ["openSettings", "showLog"], retry: false });
  });

  it("a command that cannot run, and any other start failure", () => {
    expect(problemFor({ kind: "spawn", command: "/opt/bc", code: "EACCES", message: "" }).message).toContain("`/opt/bc` cannot be run (permission denied)");
    const other = problemFor({ kind: "spawn", command: "bc", code: "E2BIG", message: "argument list too long" });
    expect(other.message).toContain("could not be started: argument list too long");
    expect(other.retry).toBe(false);
  });

  it("a daemon that dies: its last log line, retried with backoff", () => {
    const problem = problemFor({
      kind: "exit",
      commandLine: "base-context serve",
      code: 1,
      signal: null,
      stderr: "[base-context] info: starting\n[base-context] error: out of memory\n\n",
      ranMs: 200,
    });
    expect(problem.message).toBe("Base Context: the daemon exited with code 1: [base-context] error: out of memory. The log has the details.");
    expect(problem).toMatchObject({ actions: ["showLog", "restart"], retry: true });
    expect(problemFor({ kind: "exit", commandLine: "x", code: null, signal: "SIGKILL", stderr: "", ranMs: 5 }).message).toBe(
      "Base Context: the daemon was killed (SIGKILL). The log has the details.",
    );
  });

  it("a command line that is not a daemon's (usage error, exit 2): check the settings, no retry", () => {
    const problem = problemFor({ kind: "exit", commandLine: "node serve", code: 2, signal: null, stderr: "unknown command \"serve\"", ranMs: 50 });
    expect(problem.message).toContain("`node serve` is not a Base Context daemon: unknown command \"serve\"");
    expect(problem.message).toContain("`baseContext.daemon.args`");
    expect(problem.retry).toBe(false);
  });

  it("a socket nobody listens on: how to start a shared daemon or go back to one's own", () => {
    const missing = problemFor({ kind: "socket", path: "/run/bc.sock", code: "ENOENT", message: "" });
    expect(missing.message).toContain("no daemon listens on /run/bc.sock");
    expect(missing.message).toContain("`base-context serve --socket /run/bc.sock`");
    expect(missing.message).toContain("clear `baseContext.daemon.socket`");
    expect(missing.retry).toBe(true);
    expect(problemFor({ kind: "socket", path: "/s", code: "ECONNREFUSED", message: "" }).message).toContain("its daemon stopped without removing it");
    expect(problemFor({ kind: "socket", path: "/s", code: "EACCES", message: "" })).toMatchObject({ retry: false });
  });

  it("a store the daemon cannot open: the daemon's words and hint, and where to look", () => {
    const problem = problemFor({
      kind: "rpc",
      code: -32803,
      message: "the daemon cannot use its session database /home/me/.base-context/sessions.db: unable to open database file",
      data: { code: "request_failed", databasePath: "/home/me/.base-context/sessions.db", hint: "run `base-context doctor` to see what is wrong with it" },
    });
    expect(problem.message).toBe(
      "Base Context cannot open its session store: /home/me/.base-context/sessions.db: unable to open database file. " +
        "Run `base-context doctor` to see what is wrong with it. Check the folder's permissions and free space, or point the daemon " +
        'at another home with `"BASE_CONTEXT_HOME": "<folder>"` in `baseContext.daemon.env`.',
    );
    expect(problem).toMatchObject({ actions: ["showLog", "openSettings", "restart"], retry: false });
    const postgres = problemFor({ kind: "rpc", code: -32803, message: "the daemon cannot use its session store: connection refused", data: { storeUrl: "postgres://h/db" } });
    expect(postgres.message).toContain("Check the server's permissions");
  });

  it("another protocol version, and any other failure", () => {
    expect(problemFor({ kind: "rpc", code: 0, message: "the daemon speaks protocol version 2, this extension 1", data: { code: "protocol_version" } }).message).toContain(
      "Update the extension or `base-context`",
    );
    expect(problemFor({ kind: "rpc", code: -32603, message: "boom" }).message).toBe("Base Context: the daemon failed: boom.");
  });
});

describe("requestErrorText and errorCode", () => {
  it("adds the daemon's hint to its message, and reads data.code", () => {
    const error = { code: -31994, message: "the file is not a session", data: { code: "import_failed", hint: "give --format\nor check the file" } };
    expect(requestErrorText(error)).toBe("the file is not a session (give --format; or check the file)");
    expect(errorCode(error)).toBe("import_failed");
    expect(requestErrorText(new Error("plain"))).toBe("plain");
    expect(errorCode(new Error("plain"))).toBeUndefined();
  });
});
