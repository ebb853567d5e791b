/**
 * The hook's last resort (hook-deadline.ts), in a thread of its own: at the deadline, if the
 * process is still there, it says why on stderr and ends the process with exit status 0, whatever
 * the main thread is doing. The main thread may be inside a system call that never returns (a
 * home on a file system that does not answer), where no timer of its own can fire; Node's
 * `process.exit` would wait for this thread, and a signal would end the process with another
 * status, which Claude Code reads as a failure. A WASI instance created with `returnOnExit: false`
 * ends the Node.js process with the code its program gives to `proc_exit` (documented in
 * node:wasi), from any thread: the program here is that one call.
 */
import { writeSync } from "node:fs";
import { workerData } from "node:worker_threads";

interface DeadlineData {
  /** `Date.now()` at which the process must be over. */
  at: number;
  /** The line written on stderr then. */
  message: string;
}

/** A WebAssembly module whose `_start` calls WASI's `proc_exit(0)` (wasi_snapshot_preview1). */
const EXIT_ZERO = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x00, 0x00, 0x02, 0x24, 0x01, 0x16,
  ...new TextEncoder().encode("wasi_snapshot_preview1"),
  0x09, ...new TextEncoder().encode("proc_exit"), 0x00, 0x00, 0x03, 0x02, 0x01, 0x01, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x13, 0x02,
  0x06, ...new TextEncoder().encode("memory"), 0x02, 0x00, 0x06, ...new TextEncoder().encode("_start"), 0x00, 0x01,
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0x10, 0x00, 0x0b,
]);

interface WebAssemblyConstructors {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => object;
}

const { at, message } = workerData as DeadlineData;
setTimeout(
  () => {
    writeSync(2, message);
    // WASI is still experimental in Node 20: its warning would be a second line on stderr.
    process.emitWarning = () => {};
    void import("node:wasi").then(({ WASI }) => {
      const wasi = new WASI({ version: "preview1", returnOnExit: false });
      // The global WebAssembly has no type here (no DOM library): the two constructors used, typed.
      const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyConstructors }).WebAssembly;
      wasi.start(new wasm.Instance(new wasm.Module(EXIT_ZERO), wasi.getImportObject()));
    });
  },
  Math.max(0, at - Date.now()),
);
