/**
 * `plugins.isolation: "process"`: the same SDK and hooks as in a worker thread, in a child process
 * that has no secret to read, cannot write, cannot start programs, and whose memory is bounded
 * outside the V8 heap too. Each misbehaving plugin fails alone, reported, and the host goes on.
 */
import type { PluginError } from "@base-context/protocol";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PluginHost, type PluginHostOptions } from "./host.js";
import { compactEvent, eventually, pluginModule, settings, writePlugin } from "./test-support.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const disposers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

const SECRET = "sk-test-process-isolation-secret";

async function processHost(files: Record<string, Record<string, string>>, options: Omit<PluginHostOptions, "home"> = {}) {
  const home = dirs.make();
  disposers.push(() => dirs.remove(home));
  for (const [name, pluginFiles] of Object.entries(files)) writePlugin(join(home, "plugins"), name, pluginFiles);
  process.env.BC_TEST_SECRET = SECRET;
  disposers.push(() => void delete process.env.BC_TEST_SECRET);
  const host = new PluginHost({
    home,
    watch: false,
    isolation: () => "process",
    hiddenEnv: () => ["BC_TEST_SECRET"],
    services: { countTokens: (text) => text.length, complete: async () => ({ text: "(the model)" }) },
    ...options,
  });
  disposers.push(() => host.dispose());
  const errors: PluginError[] = [];
  host.onDidError((error) => errors.push(error));
  await host.start();
  return { host, errors, home };
}

const summaryOf = (expression: string) => `return { compaction: { summary: ${expression}, firstKeptEntryId: "u2", tokensBefore: 1 } };`;
const hooks = (body: string, preamble = "") => ({
  "index.js": pluginModule(`async session_before_compact(event, ctx) { ${body} }`, preamble),
});

describe('plugins.isolation: "process"', () => {
  it("runs a TypeScript plugin with the SDK, ctx.countTokens, ctx.complete and ctx.log through the host", async () => {
    const { host } = await processHost({
      typed: {
        "index.ts": `import { definePlugin } from "@base-context/plugin-sdk";
const words: string = "from a process";
export default definePlugin({ name: "typed", apiVersion: 1, hooks: { async session_before_compact(event, ctx) {
  ctx.log("info", "hello");
  const tokens = await ctx.countTokens("twelve chars");
  const { text } = await ctx.complete({ prompt: "hi", maxTokens: 5 });
  return { compaction: { summary: words + " " + text + " " + tokens + " " + process.pid, firstKeptEntryId: "u2", tokensBefore: 1 } };
} } });`,
      },
    });
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.errors).toEqual([]);
    const [text, tokens, pid] = (run.kind === "result" ? run.value.summary : "").split(/ (?=\d)/);
    expect([text, tokens]).toEqual(["from a process (the model)", "12"]);
    expect(Number(pid)).not.toBe(process.pid);
  });
});

describe("a misbehaving plugin in a process", () => {
  const run = async (
    plugin: Record<string, string>,
    limits: Parameters<typeof settings>[0] = {},
    options: Omit<PluginHostOptions, "home"> = {},
  ) => {
    const { host, errors } = await processHost({ bad: plugin }, { abortGraceMs: 100, ...options });
    const result = await host.runCompactHook(compactEvent(), { settings: settings({ hookTimeoutMs: 5_000, ...limits }) });
    return { host, errors, result, summary: result.kind === "result" ? result.value.summary : undefined };
  };

  it("cannot read the daemon's secrets: a scrubbed environment, and /proc is not readable", async () => {
    const { summary } = await run(
      hooks(
        `const out = [String(process.env.BC_TEST_SECRET)];
        for (const path of ["/proc/self/environ", "/proc/" + process.ppid + "/environ", "/etc/passwd"]) {
          try { out.push(readFileSync(path, "utf8").includes(${JSON.stringify(SECRET)}) ? "SECRET" : "read"); } catch (error) { out.push(error.code); }
        }
        ${summaryOf('out.join(" ")')}`,
        'import { readFileSync } from "node:fs";',
      ),
    );
    expect(summary).toBe("undefined ERR_ACCESS_DENIED ERR_ACCESS_DENIED ERR_ACCESS_DENIED");
  });

  it("cannot write files, start programs or signal the daemon", async () => {
    const { summary, host } = await run(
      hooks(
        `const out = [];
        const attempt = (what) => { try { what(); out.push("done"); } catch (error) { out.push(error.code); } };
        attempt(() => writeFileSync(join(ctx.plugin.dir, "written.txt"), "x"));
        attempt(() => spawnSync("/bin/true"));
        attempt(() => process.kill(process.ppid, "SIGTERM"));
        ${summaryOf('out.join(" ")')}`,
        'import { writeFileSync } from "node:fs"; import { spawnSync } from "node:child_process"; import { join } from "node:path";',
      ),
    );
    expect(summary).toBe("ERR_ACCESS_DENIED ERR_ACCESS_DENIED ERR_ACCESS_DENIED");
    expect((await host.list())[0]!.status).toBe("active");
  });

  it("ending its own process is a crash of that plugin only", async () => {
    const { result, host } = await run(hooks("process.kill(process.pid, 'SIGKILL'); await new Promise(() => {});"));
    expect(result.errors).toEqual([expect.objectContaining({ kind: "crash", message: "the plugin's process was ended by SIGKILL" })]);
    expect(process.exitCode ?? 0).toBe(0);
    expect((await host.list())[0]!.name).toBe("bad");
  });

  it("a throw is an exception, a hang a timeout after which its process group is killed", async () => {
    expect((await run(hooks("throw new TypeError('nope');"))).result.errors).toEqual([
      expect.objectContaining({ kind: "exception", message: expect.stringMatching(/^TypeError: nope/) }),
    ]);
    const { addLogSink } = await import("../log.js");
    const lines: string[] = [];
    disposers.push(addLogSink((_level, message) => lines.push(message)).dispose);
    const hung = await run(hooks('ctx.log("info", "pid " + process.pid); for (;;) {}'), { hookTimeoutMs: 300 });
    expect(hung.result.errors).toEqual([expect.objectContaining({ kind: "timeout" })]);
    const pid = Number(lines.map((line) => /^\[plugin bad\] pid (\d+)$/.exec(line)?.[1]).find((found) => found !== undefined));
    expect(pid).toBeGreaterThan(0);
    const gone = () => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    };
    await eventually(gone, 5_000, "the hung plugin's process to be killed");
  });

  it("a 64 MB result is refused in the process: too-large", async () => {
    const { result } = await run(hooks(summaryOf('"x".repeat(64 * 1024 * 1024)')));
    expect(result.errors).toEqual([
      expect.objectContaining({ kind: "too-large", message: expect.stringContaining("over plugins.maxMessageBytes") }),
    ]);
  });

  it("a message posted past the bootstrap over the limit is refused unread", async () => {
    const { result } = await run(
      hooks(`const data = Buffer.from('{"t":"return","callId":1,"value":"' + "z".repeat(2 * 1024 * 1024) + '"}\\n');
        for (let at = 0; at < data.length; ) {
          try { at += writeSync(3, data, at); } catch (error) { if (error.code !== "EAGAIN") throw error; await new Promise((resolve) => setTimeout(resolve, 1)); }
        }
        await new Promise(() => {});`, 'import { writeSync } from "node:fs";'),
      { maxMessageBytes: 1024 * 1024 },
      { maxMessageBytes: () => 1024 * 1024 },
    );
    expect(result.errors).toEqual([
      expect.objectContaining({ kind: "too-large", message: "a message from the plugin is over plugins.maxMessageBytes (1048576 bytes)" }),
    ]);
  });

  it("3 GB of Buffers is an out-of-memory failure (the address-space limit), not a timeout", async () => {
    const { result } = await run(
      hooks("const hoard = []; for (let i = 0; i < 30; i++) hoard.push(Buffer.alloc(100 * 1024 * 1024, 1)); return undefined;"),
      { hookTimeoutMs: 20_000 },
    );
    expect(result.errors).toEqual([expect.objectContaining({ kind: "oom" })]);
  });

  it("what it writes to fd 1 goes to the daemon's log", async () => {
    const { addLogSink } = await import("../log.js");
    const lines: string[] = [];
    disposers.push(addLogSink((_level, message) => lines.push(message)).dispose);
    const { result } = await run(hooks(`writeSync(1, "Content-Length: 2\\r\\n\\r\\n{}\\n"); ${summaryOf('"ok"')}`, 'import { writeSync } from "node:fs";'));
    expect(result.kind).toBe("result");
    // The line comes over the process's stdout, the result over fd 3: two pipes, in no set order.
    const line = "[plugin bad] Content-Length: 2";
    await eventually(() => (lines.includes(line) ? true : undefined), 5_000, "the plugin's stdout line in the log");
  });
});
