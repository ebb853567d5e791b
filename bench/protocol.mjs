// The protocol's limits in memory terms (docs/guarantees.md, "Protocol and connections"):
// - the daemon's peak RSS growth for one entry at the default limits.maxEntryBytes (words, so the
//   tokenizer's own cost per character does not dominate), with the tokenizer already loaded;
// - an entry over the limit is refused without the memory of storing it;
// - a Content-Length of 2^40 followed by 64 MiB of body grows nothing: refused at the header.
import { createConnection } from "node:net";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { daemonMain, protocolModule } from "./lib/dist.mjs";
import { startDaemon, temporaryHome } from "./lib/daemon-process.mjs";
import { progress, report } from "./lib/report.mjs";
import { memoryOf } from "./lib/stats.mjs";

const { EntryAppend, SessionCreate } = await protocolModule();
const MiB = 1024 * 1024;
/** Waits until the daemon's start-up work (tokenizer warm-up, plugin threads) is over: RSS steady for 2 s. */
async function settle(pid) {
  let last = memoryOf(pid).currentMB;
  let steadySince = performance.now();
  for (const deadline = performance.now() + 30_000; performance.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = memoryOf(pid).currentMB;
    if (Math.abs(now - last) > 1) steadySince = performance.now();
    last = now;
    if (performance.now() - steadySince >= 2000) return;
  }
}

async function entryGrowth(label, mib) {
  const home = temporaryHome(label);
  const daemon = await startDaemon(home.path);
  try {
    const { session } = await daemon.request(SessionCreate, { cwd: "/bench" });
    await daemon.request(EntryAppend, {
      sessionId: session.id,
      entry: { type: "message", message: { role: "user", content: "warm the tokenizer" } },
    });
    await settle(daemon.pid);
    const before = daemon.memory().currentMB;
    const content = "word ".repeat(Math.floor((mib * MiB) / 5));
    let refused = false;
    await daemon
      .request(EntryAppend, { sessionId: session.id, entry: { type: "message", message: { role: "user", content } } })
      .catch((error) => {
        if (error?.data?.code !== "entry_too_large") throw error;
        refused = true;
      });
    return { growthMB: daemon.memory().peakMB - before, refused };
  } finally {
    await daemon.stop();
    home.remove();
  }
}

progress("one 15 MiB entry (under the default 16 MiB limit)");
const stored = await entryGrowth("entry", 15);
report({ name: "daemon peak RSS growth, append of one 15 MiB entry", value: stored.growthMB, unit: "MB", digits: 0 });
report({
  name: "  per MiB of entry",
  value: stored.growthMB / 15,
  digits: 1,
  target: { max: 14 },
  note: "frame, parse, stored JSON, SQLite, reply echo",
});

progress("one 40 MiB entry (over the limit: refused)");
const refused = await entryGrowth("refused", 40);
if (!refused.refused) throw new Error("the 40 MiB entry was not refused");
report({
  name: "daemon peak RSS growth, refused 40 MiB entry",
  value: refused.growthMB,
  unit: "MB",
  digits: 0,
  target: { max: 40 * 4 },
  note: "read and parsed, never stored",
});

progress("Content-Length: 2^40 then 64 MiB of body over a socket");
{
  const home = temporaryHome("socket");
  writeFileSync(join(home.path, "settings.json"), "{}");
  const path = join(home.path, "daemon.sock");
  const child = spawn(process.execPath, [daemonMain, "serve", "--socket", path], {
    env: { ...process.env, BASE_CONTEXT_HOME: home.path },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  while (!stderr.includes("listening on")) await new Promise((resolve) => setTimeout(resolve, 50));
  await settle(child.pid);
  const before = memoryOf(child.pid).currentMB;
  const socket = createConnection(path);
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.on("error", () => undefined);
  const closed = new Promise((resolve) => socket.once("close", resolve));
  socket.write(`Content-Length: ${2 ** 40}\r\n\r\n`);
  const chunk = Buffer.alloc(MiB, "z");
  // The daemon closes the connection once it has refused the header: stop sending then.
  let isClosed = false;
  void closed.then(() => (isClosed = true));
  for (let sent = 0; sent < 64 && !isClosed; sent++) {
    if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once("drain", resolve)), closed]);
  }
  socket.end();
  await closed;
  report({
    name: "daemon peak RSS growth, 2^40 Content-Length + 64 MiB sent",
    value: memoryOf(child.pid).peakMB - before,
    unit: "MB",
    digits: 0,
    target: { max: 16 },
    note: "refused at the header",
  });
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  home.remove();
}
