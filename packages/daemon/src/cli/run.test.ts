import { describe, expect, it } from "vitest";
import { AppError, CancelledError } from "../errors.js";
import type { CommandSpec } from "./args.js";
import type { CliIo } from "./output.js";
import { EXIT, interruptible, runCommand } from "./run.js";

const SPEC: CommandSpec = { name: "demo", summary: "a command for the tests" };

function captureIo(env: NodeJS.ProcessEnv = {}): CliIo & { out: () => string; err: () => string } {
  let out = "";
  let err = "";
  return {
    stdout: {
      write: (text: string) => {
        out += text;
        return true;
      },
    },
    stderr: {
      write: (text: string) => {
        err += text;
        return true;
      },
    },
    env,
    out: () => out,
    err: () => err,
  };
}

describe("runCommand", () => {
  it("turns an unexpected exception into one line and exit 1, without a stack trace", async () => {
    const io = captureIo();
    const code = await runCommand(SPEC, [], io, async () => {
      throw new TypeError("cannot read properties of undefined");
    });
    expect(code).toBe(EXIT.failure);
    expect(io.err()).toBe("base-context demo: cannot read properties of undefined\n");
  });

  it("shows the stack of an unexpected exception only with BASE_CONTEXT_LOG=debug", async () => {
    const io = captureIo({ BASE_CONTEXT_LOG: "debug" });
    await runCommand(SPEC, [], io, async () => {
      throw new TypeError("boom");
    });
    expect(io.err()).toContain("TypeError: boom\n    at ");
  });

  it("words the daemon's own errors for the command line, with what to do next", async () => {
    const io = captureIo({ BASE_CONTEXT_LOG: "debug" });
    const code = await runCommand(SPEC, [], io, async () => {
      throw new AppError("session_not_found", 'no session with id "x"', { sessionId: "x" });
    });
    expect(code).toBe(EXIT.failure);
    expect(io.err()).toBe('base-context demo: no session with id "x"\n  List the sessions with: base-context sessions\n');
  });

  it("answers argument errors with exit 2 and a pointer to --help", async () => {
    const io = captureIo();
    expect(await runCommand(SPEC, ["extra"], io, async () => EXIT.ok)).toBe(EXIT.usage);
    expect(io.err()).toContain('Run "base-context demo --help" for usage.');
  });
});

describe("interruptible", () => {
  it("aborts the work's signal with a CancelledError on Ctrl-C, and stops listening afterwards", async () => {
    const listeners = process.listenerCount("SIGINT");
    const io = captureIo();
    const code = await runCommand(SPEC, [], io, () =>
      interruptible(io, "working", async (signal) => {
        expect(process.listenerCount("SIGINT")).toBe(listeners + 1);
        process.emit("SIGINT", "SIGINT");
        expect(signal.reason).toBeInstanceOf(CancelledError);
        signal.throwIfAborted();
        return EXIT.ok;
      }),
    );
    expect(code).toBe(EXIT.failure);
    expect(io.err()).toBe("base-context demo: cancelled; nothing was written\n");
    expect(process.listenerCount("SIGINT")).toBe(listeners);
  });

  it("stops listening for Ctrl-C when the work fails", async () => {
    const listeners = process.listenerCount("SIGINT");
    await expect(interruptible(captureIo(), "working", async () => Promise.reject(new Error("no")))).rejects.toThrow("no");
    expect(process.listenerCount("SIGINT")).toBe(listeners);
  });
});
