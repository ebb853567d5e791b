import type { PluginError } from "@base-context/protocol";
import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { addLogSink } from "../log.js";
import { PluginHost, type PluginHostOptions } from "./host.js";
import { atomicSave, compactEvent, eventually, pluginModule, settings, writePlugin } from "./test-support.js";
import { recordScore } from "../../../../test/adversarial/scoreboard.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const disposers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
  vi.restoreAllMocks();
});

async function hostWith(plugins: Record<string, string>, options: Omit<PluginHostOptions, "home"> = {}) {
  const home = dirs.make();
  disposers.push(() => dirs.remove(home));
  for (const [name, hooks] of Object.entries(plugins)) writePlugin(join(home, "plugins"), name, { "index.js": pluginModule(hooks) });
  const host = new PluginHost({ home, watch: false, ...options });
  disposers.push(() => host.dispose());
  const errors: PluginError[] = [];
  host.onDidError((error) => errors.push(error));
  await host.start();
  return { host, home, errors };
}

describe("plugin isolation", () => {
  it("terminates a plugin stuck in while(true) after the timeout while the daemon thread keeps running", async () => {
    const { host, errors } = await hostWith({ spinner: "session_before_compact() { for (;;) {} }" }, { abortGraceMs: 100 });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    disposers.push(() => clearInterval(ticker));

    // The hook never ends: that the call returns at all is the timeout's doing.
    const started = performance.now();
    const run = await host.runCompactHook(compactEvent(), { settings: settings({ hookTimeoutMs: 300 }) });
    const elapsed = performance.now() - started;
    expect(run.kind).toBe("none");
    expect(run.errors).toEqual([
      expect.objectContaining({ pluginId: "global:spinner", kind: "timeout", message: "the hook did not finish within 300 ms" }),
    ]);
    expect(elapsed).toBeGreaterThanOrEqual(290); // not before the timeout (a loaded machine only makes it later)
    // Timers of the daemon thread ran meanwhile: the ticker's first tick (10 ms) comes before the
    // hook's timeout (300 ms) on the same thread's event loop, however busy the machine.
    expect(ticks).toBeGreaterThan(0);
    // After the grace the stuck thread is terminated and a fresh one serves the same version.
    const log: string[] = [];
    disposers.push(addLogSink((_level, message) => log.push(message)).dispose);
    await eventually(() => log.find((line) => line.includes("terminating the worker")), 3_000, "the worker to be terminated");
    expect(errors.map((error) => error.kind)).toEqual(["timeout"]);
    const [info] = await eventually(async () => {
      const list = await host.list();
      return list[0]?.status === "active" ? list : undefined;
    });
    expect(info!.generation).toBe(1);
  });

  it("refuses a plugin's process.kill(process.pid): the daemon's process is not the plugin's to end", async () => {
    const { host } = await hostWith({ killer: `session_before_compact() { process.kill(process.pid, "SIGTERM"); }` });
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.errors).toEqual([
      expect.objectContaining({ kind: "exception", message: expect.stringMatching(/^a plugin may not signal the daemon's process/) }),
    ]);
  });

  it("reports a plugin that exhausts its heap as oom and keeps the daemon alive", async () => {
    const { host } = await hostWith(
      { hog: "session_before_compact() { const hoard = []; for (let i = 0; ; i++) hoard.push(new Array(100_000).fill(i)); }" },
      { resourceLimits: { maxOldGenerationSizeMb: 32 } },
    );
    const run = await host.runCompactHook(compactEvent(), { settings: settings({ hookTimeoutMs: 20_000 }) });
    expect(run.kind).toBe("none");
    expect(run.errors).toEqual([expect.objectContaining({ pluginId: "global:hog", kind: "oom", hook: "session_before_compact" })]);
    expect(process.memoryUsage().heapUsed).toBeLessThan(1_000_000_000);
  });

  it("sends a plugin's stdout and stderr to the daemon log with its name, never to the daemon's stdout", async () => {
    const written: string[] = [];
    const realWrite = process.stdout.write.bind(process.stdout);
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      written.push(String(chunk));
      return (realWrite as (chunk: string | Uint8Array, ...args: unknown[]) => boolean)(chunk, ...rest);
    });
    const log: { level: string; message: string }[] = [];
    disposers.push(addLogSink((level, message) => log.push({ level, message })).dispose);
    const { host } = await hostWith({
      chatty: `session_before_compact() { console.log("hello from the plugin"); process.stdout.write("partial "); process.stdout.write("line\\n"); console.error("oops on stderr"); }`,
    });
    await host.runCompactHook(compactEvent(), { settings: settings() });
    const logged = (level: string, message: string) => log.find((entry) => entry.level === level && entry.message === message);
    await eventually(() => logged("info", "[plugin chatty] hello from the plugin"), 3_000, "stdout line");
    await eventually(() => logged("info", "[plugin chatty] partial line"), 3_000, "stdout line in two writes");
    await eventually(() => logged("warn", "[plugin chatty] oops on stderr"), 3_000, "stderr line");
    expect(written.join("")).not.toContain("hello from the plugin");
  });

  it("ignores what a plugin posts on parentPort itself, and keeps serving its hooks", async () => {
    const log: string[] = [];
    disposers.push(addLogSink((_level, message) => log.push(message)).dispose);
    const { host, errors } = await hostWith({
      poster: `async session_before_compact() { const { parentPort } = await import("node:worker_threads"); parentPort.postMessage("not json"); parentPort.postMessage({ t: "return" }); parentPort.postMessage("[1]"); return { cancel: true }; }`,
    });
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run).toMatchObject({ kind: "cancel", errors: [] });
    expect(errors).toEqual([]);
    await eventually(
      () => (log.filter((line) => line.includes("not the host's protocol")).length === 3 ? true : undefined),
      3_000,
      "three ignored messages",
    );
    expect((await host.runCompactHook(compactEvent(), { settings: settings() })).kind).toBe("cancel");
  });

  it("disables a plugin after 5 crashes in 3 minutes, until its files change", async () => {
    const crashing = `session_before_compact() { setImmediate(() => { throw new Error("boom"); }); return new Promise(() => {}); }`;
    let now = 1_000_000;
    const { host, home, errors } = await hostWith({ crasher: crashing }, { now: () => now, watch: true });
    for (let crash = 1; crash <= 5; crash++) {
      const run = await host.runCompactHook(compactEvent(), { settings: settings() });
      expect(run.errors).toEqual([expect.objectContaining({ kind: "crash", message: expect.stringContaining("boom") })]);
      now += 10_000;
    }
    const [disabled] = await host.list();
    expect(disabled!.status).toBe("disabled");
    expect(disabled!.lastError!.message).toContain("disabled after 5 crashes within 180 s");
    expect(errors.filter((error) => error.message.includes("disabled after"))).toHaveLength(1);
    // Disabled: the plugin is not called any more.
    expect(await host.runCompactHook(compactEvent(), { settings: settings() })).toEqual({ kind: "none", errors: [] });

    // Saving a file loads a new version: it runs again.
    atomicSave(
      join(home, "plugins", "crasher", "index.js"),
      pluginModule(`session_before_compact() { return { cancel: true }; }`),
    );
    const info = await eventually(async () => {
      const [current] = await host.list();
      return current?.status === "active" && current.generation === 2 ? current : undefined;
    });
    expect(info.status).toBe("active");
    expect((await host.runCompactHook(compactEvent(), { settings: settings() })).kind).toBe("cancel");
  });

  it("does not count crashes that are further apart than the window", async () => {
    let now = 0;
    const { host } = await hostWith(
      { crasher: `session_before_compact() { process.exit(3); }` },
      { now: () => now, crashLimit: 2, crashWindowMs: 1_000 },
    );
    const first = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(first.errors[0]).toMatchObject({ kind: "crash", message: "the plugin's worker exited with code 3" });
    now += 5_000;
    await host.runCompactHook(compactEvent(), { settings: settings() });
    expect((await host.list())[0]!.status).toBe("active");
    now += 500;
    await host.runCompactHook(compactEvent(), { settings: settings() });
    expect((await host.list())[0]!.status).toBe("disabled");
  });

  it("abandons a thread that does not stop (blocked in a system call) and runs the plugin in a child process from then on", async () => {
    const home = dirs.make();
    disposers.push(() => dirs.remove(home));
    const fifo = join(home, "never-written");
    execFileSync("mkfifo", [fifo]);
    // Opening the FIFO's other end after the test lets the abandoned thread's read return, and the thread end.
    disposers.push(() => closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)));
    const blocking = pluginModule(`session_before_compact() { readFileSync(${JSON.stringify(fifo)}); }`, 'import { readFileSync } from "node:fs";');
    writePlugin(join(home, "plugins"), "blocked", { "index.js": blocking });
    const host = new PluginHost({ home, watch: false, abortGraceMs: 100 });
    disposers.push(() => host.dispose());
    const errors: PluginError[] = [];
    host.onDidError((error) => errors.push(error));
    await host.start();
    expect((await host.list())[0]).toMatchObject({ status: "active", isolation: "worker" });

    const run = await host.runCompactHook(compactEvent(), { settings: settings({ hookTimeoutMs: 300 }) });
    expect(run.errors).toEqual([expect.objectContaining({ kind: "timeout" })]);
    const stuck = await eventually(() => errors.find((error) => error.message.includes("did not stop when asked")), 10_000, "the stuck report");
    expect(stuck).toMatchObject({ pluginId: "global:blocked", kind: "crash" });
    expect(stuck.message).toContain("from now on this plugin runs in a child process");
    const moved = await eventually(async () => {
      const [info] = await host.list();
      return info?.status === "active" && info.isolation === "process" ? info : undefined;
    }, 10_000, "the plugin running in a child process");
    expect(moved.generation).toBe(2);
    recordScore({ area: "plugin crash storm", scenario: "a worker thread blocked in a system call (cannot be stopped)", tried: 1, survived: 1, lost: 0 });
  });
});
