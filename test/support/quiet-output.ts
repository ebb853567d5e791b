/**
 * Setup file of every test project: what a test writes to this process's stdout and stderr (the
 * daemon's log lines of in-process tests, a child's output forwarded) is kept, and printed only
 * when the test fails, under its name. A passing run's log is vitest's lines alone. Output outside
 * a test (a file's beforeAll/afterAll) goes through as it comes.
 */
import { beforeEach } from "vitest";

type Write = typeof process.stdout.write;

let captured: string[] | undefined;

function capturing(stream: NodeJS.WriteStream): Write {
  const original = stream.write.bind(stream) as Write;
  const write = ((chunk: string | Uint8Array, encodingOrCallback?: unknown, callback?: unknown) => {
    if (captured === undefined) return original(chunk, encodingOrCallback as BufferEncoding, callback as () => void);
    captured.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    const done = typeof encodingOrCallback === "function" ? encodingOrCallback : callback;
    if (typeof done === "function") queueMicrotask(() => (done as () => void)());
    return true;
  }) as Write;
  stream.write = write;
  return original;
}

const stderr = capturing(process.stderr);
capturing(process.stdout);

beforeEach((context) => {
  const output: string[] = [];
  captured = output;
  context.onTestFinished(() => {
    captured = undefined;
    if (context.task.result?.state === "fail" && output.length > 0) {
      stderr(`\n── output of the failed test "${context.task.fullName ?? context.task.name}" ──\n${output.join("")}── end of its output ──\n`);
    }
  });
});
