// Bounded under slow and hostile clients (docs/guarantees.md, "Protocol and connections"):
// - a client that sends 250 requests whose replies are 3 MB each and reads none: the daemon's peak
//   RSS, over stdio and over a socket;
// - on the socket daemon, another client's `context/build` latency before and while the first one
//   is stalled (the stalled client must cost the others nothing);
// - 50 MB where a short string belongs (method name, id, a field value): how long the answer takes
//   and how big it is.
// `node -e 0` is printed beside the timings: machines differ by a third from day to day.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import { daemonBin, protocolModule } from "./lib/dist.mjs";
import { startSocketDaemon, temporaryHome } from "./lib/daemon-process.mjs";
import { progress, report } from "./lib/report.mjs";
import { memoryOf, percentile, timeRuns } from "./lib/stats.mjs";

const { ContextBuild, EntryAppend, SessionCreate } = await protocolModule();
const REQUESTS = 250;
const REPLY_CHARS = 3 * 1024 * 1024;
const BUILDS = 200;
const HUGE_CHARS = 50 * 1024 * 1024;

const frame = (body) => {
  const bytes = Buffer.from(body, "utf8");
  return Buffer.concat([Buffer.from(`Content-Length: ${bytes.length}\r\n\r\n`, "latin1"), bytes]);
};

/**
 * Counts framed messages on a stream without keeping the bodies of big ones: each reply's id,
 * size, and its parsed body when small. `wait(id)` resolves with that reply.
 */
function leanReader(stream) {
  const replies = new Map();
  const waiters = new Map();
  let chunks = [];
  let buffered = 0;
  let need = -1;
  const join = () => {
    if (chunks.length !== 1) chunks = [Buffer.concat(chunks)];
    return chunks[0];
  };
  stream.on("data", (chunk) => {
    chunks.push(chunk);
    buffered += chunk.length;
    for (;;) {
      if (need < 0) {
        const all = join();
        const end = all.indexOf("\r\n\r\n");
        if (end < 0) return;
        need = Number(/Content-Length: (\d+)/i.exec(all.subarray(0, end).toString("latin1"))[1]);
        chunks = [all.subarray(end + 4)];
        buffered = all.length - end - 4;
      }
      if (buffered < need) return;
      const all = join();
      const body = all.subarray(0, need);
      const head = body.subarray(0, 200).toString("utf8");
      if (!head.includes('"method"')) {
        const id = JSON.parse(/"id":(\d+|"[^"]*"|null)/.exec(head)?.[1] ?? "null");
        const reply = { bytes: need, at: performance.now(), body: need < 64 * 1024 ? JSON.parse(body.toString("utf8")) : undefined };
        replies.set(id, reply);
        waiters.get(id)?.(reply);
      }
      chunks = [all.subarray(need)];
      buffered = all.length - need;
      need = -1;
    }
  });
  return {
    replies,
    wait: (id) => (replies.has(id) ? Promise.resolve(replies.get(id)) : new Promise((resolve) => waiters.set(id, resolve))),
  };
}

async function call(output, reader, id, method, params) {
  output.write(frame(JSON.stringify({ jsonrpc: "2.0", id, method, params })));
  const reply = await reader.wait(id);
  if (reply.body?.error) throw new Error(`${method}: ${reply.body.error.message}`);
  return reply.body?.result;
}

/** A session whose `session/path` reply is a little over 3 MB; returns its id. */
async function bigSession(output, reader) {
  const { session } = await call(output, reader, 1, "session/create", { cwd: "/bench" });
  await call(output, reader, 2, "entry/append", {
    sessionId: session.id,
    entry: { type: "message", message: { role: "user", content: "x".repeat(REPLY_CHARS), timestamp: 1 } },
  });
  return session.id;
}

const cpuTicks = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
};

/** Waits until the process used under 5 ticks of CPU in a second: the daemon stopped reading. */
async function settled(pid) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const before = cpuTicks(pid);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (cpuTicks(pid) - before < 5) return;
  }
  throw new Error("the daemon was still busy a minute after the flood");
}

/** The daemon's debug line when it stops reading a client whose replies wait. */
const STALLED = /is not reading its replies \(\d+ KiB of output waiting/;

/**
 * Sends the flood on `output` without reading, waits until the daemon says its output queue is
 * full (idle alone could be a pause between two requests) and is idle, then reads it all.
 */
async function floodUnread(pid, output, stream, reader, sessionId, stderr) {
  stream.pause();
  for (let i = 0; i < REQUESTS; i++) output.write(frame(JSON.stringify({ jsonrpc: "2.0", id: 1000 + i, method: "session/path", params: { sessionId } })));
  for (const deadline = Date.now() + 120_000; !STALLED.test(stderr()); ) {
    if (Date.now() > deadline) throw new Error("the daemon never said its output queue was full");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await settled(pid);
  return { peakMB: memoryOf(pid).peakMB, readAll: () => readAll(stream, reader) };
}

async function readAll(stream, reader) {
  stream.resume();
  await reader.wait(1000 + REQUESTS - 1);
  let arrived = 0;
  for (let i = 0; i < REQUESTS; i++) if ((reader.replies.get(1000 + i)?.bytes ?? 0) > REPLY_CHARS) arrived++;
  return arrived;
}

function homeWithSettings(label) {
  const home = temporaryHome(label);
  writeFileSync(join(home.path, "settings.json"), "{}");
  return home;
}

async function overStdio() {
  const home = homeWithSettings("bounded-stdio");
  const env = { ...process.env, BASE_CONTEXT_HOME: home.path, BASE_CONTEXT_LOG: "debug" };
  const child = spawn(process.execPath, [daemonBin, "serve"], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (text) => (stderr += text));
  try {
    const reader = leanReader(child.stdout);
    await call(child.stdin, reader, 0, "initialize", { protocolVersion: "1" });
    const sessionId = await bigSession(child.stdin, reader);
    progress("stdio: 250 unread 3 MB replies");
    const flood = await floodUnread(child.pid, child.stdin, child.stdout, reader, sessionId, () => stderr);
    const arrived = await flood.readAll();
    report({ name: "stdio: daemon peak RSS, 250 unread 3 MB replies", value: flood.peakMB, unit: "MB", target: { max: 400 }, digits: 0 });
    report({ name: "  replies that arrived once the client read", value: arrived, target: { min: REQUESTS }, digits: 0 });
  } finally {
    child.kill("SIGKILL");
    home.remove();
  }
}

async function overSocket() {
  const home = homeWithSettings("bounded-socket");
  const daemon = await startSocketDaemon(home.path, { BASE_CONTEXT_LOG: "debug" });
  try {
    const other = await daemon.connect("other");
    const { session } = await other.request(SessionCreate, { cwd: "/bench" });
    for (let i = 0; i < 40; i++) {
      const text = `turn ${i} `.repeat(50);
      const message = i % 2 ? { role: "assistant", content: [{ type: "text", text }] } : { role: "user", content: text };
      await other.request(EntryAppend, { sessionId: session.id, entry: { type: "message", message } });
    }
    const build = () => other.request(ContextBuild, { sessionId: session.id });
    await timeRuns(20, build);
    const alone = await timeRuns(BUILDS, build);

    const socket = createConnection(join(home.path, "daemon.sock"));
    await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    const reader = leanReader(socket);
    await call(socket, reader, 0, "initialize", { protocolVersion: "1" });
    const sessionId = await bigSession(socket, reader);
    progress("socket: one client stalls with 250 unread 3 MB replies, another builds context");
    const flood = await floodUnread(daemon.pid, socket, socket, reader, sessionId, daemon.stderr);
    const stalled = await timeRuns(BUILDS, build);
    const arrived = await flood.readAll();
    socket.destroy();

    report({ name: "socket: daemon peak RSS, one client with 250 unread 3 MB replies", value: flood.peakMB, unit: "MB", target: { max: 400 }, digits: 0 });
    report({ name: "  its replies that arrived once it read", value: arrived, target: { min: REQUESTS }, digits: 0 });
    report({ name: "socket: other client's context/build p50, alone", value: percentile(alone, 50), unit: "ms", digits: 2 });
    report({ name: "socket: other client's context/build p99, alone", value: percentile(alone, 99), unit: "ms", digits: 2 });
    report({ name: "socket: other client's context/build p50, one client stalled", value: percentile(stalled, 50), unit: "ms", digits: 2 });
    report({ name: "socket: other client's context/build p99, one client stalled", value: percentile(stalled, 99), unit: "ms", target: { max: 50 }, digits: 2 });
  } finally {
    await daemon.stop();
    home.remove();
  }
}

const HUGE_CASES = [
  { name: "method name", body: (huge) => `{"jsonrpc":"2.0","id":7,"method":"${huge}"}`, id: 7 },
  { name: "string id", body: (huge) => `{"jsonrpc":"2.0","id":"${huge}","method":"session/get"}`, id: null },
  { name: "cwd value", body: (huge) => `{"jsonrpc":"2.0","id":7,"method":"session/create","params":{"cwd":"${huge}"}}`, id: 7 },
];

async function hugeInput() {
  const home = homeWithSettings("bounded-huge");
  const child = spawn(process.execPath, [daemonBin, "serve"], { env: { ...process.env, BASE_CONTEXT_HOME: home.path }, stdio: ["pipe", "pipe", "ignore"] });
  try {
    const reader = leanReader(child.stdout);
    await call(child.stdin, reader, 0, "initialize", { protocolVersion: "1" });
    const huge = "m".repeat(HUGE_CHARS);
    for (const hugeCase of HUGE_CASES) {
      reader.replies.delete(hugeCase.id);
      const message = frame(hugeCase.body(huge));
      progress(`50 MB ${hugeCase.name}`);
      // Timed from the first byte written to the reply: the transfer of the 50 MB is part of it.
      const sent = performance.now();
      child.stdin.write(message);
      const reply = await reader.wait(hugeCase.id);
      report({ name: `50 MB ${hugeCase.name}: answered`, value: reply.at - sent, unit: "ms", target: { max: 2000 }, digits: 0 });
      report({ name: "  reply size", value: reply.bytes / 1024, unit: "KB", target: { max: 64 }, digits: 1 });
    }
  } finally {
    child.kill("SIGKILL");
    home.remove();
  }
}

const nodeStart = performance.now();
spawnSync(process.execPath, ["-e", "0"]);
const nodeMs = performance.now() - nodeStart;

await overStdio();
await overSocket();
await hugeInput();
report({ name: "node -e 0 (this machine, for scale)", value: nodeMs, unit: "ms", digits: 0 });
