/**
 * The framing fuzzer: every malformed frame and invalid JSON-RPC message of the catalogue, then
 * random frames for a fixed seed and count, against the built daemon over stdio and over a
 * socket. After each one a probe request follows on the same connection; the daemon must either
 * answer it (the connection is still usable) or close the connection — at once for an unreadable
 * frame, or once the client ends its side for a frame that claims more bytes than were sent.
 *
 * Lost (must be 0): a daemon that hung (no answer and no close after the client ended its side),
 * a connection left open, a socket daemon that died, an acknowledged append missing afterwards.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  connectRaw,
  frame,
  INITIALIZE,
  openSockets,
  spawnRawSocketDaemon,
  spawnRawStdio,
  type RawConnection,
  type Reply,
} from "../support/raw-daemon.js";
import { tempDirs } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";
import { CATALOGUE, randomFrames, type FramingCase } from "./framing-cases.js";
import { recordScore } from "./scoreboard.js";

const SEED = 20261203;
const RANDOM_SOCKET_FRAMES = 120;
const RANDOM_STDIO_FRAMES = 24;
/** Stdio daemons started at once for the frames that end them (each case needs its own). */
const STDIO_PARALLEL = 5;
/**
 * The stdio tests start a daemon per frame that ends one (about ten each), ~1 s apiece on a busy
 * machine: their time is bounded by that count, not by waiting on anything.
 */
const STDIO_TEST_TIMEOUT_MS = 90_000;
/** Token counts by characters: loading a tokenizer in every short-lived daemon would be most of the run. */
const SETTINGS = { tokens: { estimator: "chars4" } };
/**
 * How long a probe may take before the client gives up waiting and ends its side: long for the
 * catalogue, whose answers are checked, short for random frames, where a slow answer and a
 * close after the client ends are both fine.
 */
const CATALOGUE_PROBE_WAIT_MS = 5000;
const RANDOM_PROBE_WAIT_MS = 400;
/** How long the daemon may take to close a connection (or exit) once the client has ended its side. */
const CLOSE_WAIT_MS = 15_000;

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

type Outcome = "answered" | "closed" | "closed-on-end" | "hung";

let probeCount = 0;

/**
 * Sends `bytes` then a probe request; resolves with what the daemon did. `closed()` says whether
 * the daemon's side has ended; `endClient()` ends the client's side.
 */
async function probe(
  connection: RawConnection,
  bytes: Buffer,
  endClient: () => void,
  waitMs: number,
): Promise<{ outcome: Outcome; probeId: string }> {
  const probeId = `probe-${++probeCount}`;
  connection.write(Buffer.concat([bytes, frame(JSON.stringify({ jsonrpc: "2.0", id: probeId, method: "session/list", params: {} }))]));
  const answered = () => connection.responses().some((reply) => reply.id === probeId);
  try {
    await waitFor(() => answered() || connection.closed, { timeoutMs: waitMs, intervalMs: 5 });
    return { outcome: answered() ? "answered" : "closed", probeId };
  } catch {
    endClient();
    try {
      await waitFor(() => connection.closed, { timeoutMs: CLOSE_WAIT_MS, intervalMs: 10 });
      return { outcome: "closed-on-end", probeId };
    } catch {
      return { outcome: "hung", probeId };
    }
  }
}

/** A frame that swallows the probe is never answered: waiting long for it would prove nothing more. */
function probeWait(testCase: FramingCase): number {
  return testCase.expect.kind === "close-on-end" ? RANDOM_PROBE_WAIT_MS : CATALOGUE_PROBE_WAIT_MS;
}

/** Whether a catalogue case was handled as it must be. */
function asExpected(testCase: FramingCase, outcome: Outcome, replies: Reply[]): boolean {
  const errors = replies.filter((reply) => reply.error !== undefined);
  switch (testCase.expect.kind) {
    case "answer":
      return (
        outcome === "answered" &&
        testCase.expect.errors.every(([code, dataCode]) =>
          errors.some((reply) => reply.error!.code === code && reply.error!.data?.code === dataCode),
        )
      );
    case "close": {
      const { dataCode } = testCase.expect;
      return outcome === "closed" && errors.some((reply) => reply.id === null && reply.error!.data?.code === dataCode);
    }
    case "close-on-end":
      return outcome === "closed-on-end";
  }
}

describe("framing fuzzer over stdio", () => {
  const home = dirs.make("bc-fuzz-stdio-");
  writeFileSync(join(home, "settings.json"), JSON.stringify(SETTINGS));
  const acknowledged: string[] = [];

  /** A fresh daemon on the shared home, initialized, with one acknowledged append. */
  async function freshDaemon() {
    const daemon = spawnRawStdio(home);
    const { connection } = daemon;
    await connection.request("init", "initialize", INITIALIZE);
    if (acknowledged.length === 0) await connection.request("create", "session/create", { cwd: "/fuzz", id: "fuzz-stdio" });
    const appended = await connection.request("ack", "entry/append", {
      sessionId: "fuzz-stdio",
      entry: { type: "message", message: { role: "user", content: `ack ${acknowledged.length}` } },
    });
    acknowledged.push((appended.result as { entry: { id: string } }).entry.id);
    return daemon;
  }

  /** Ends a daemon the test is done with; false when it does not exit (hung). */
  async function retire(daemon: ReturnType<typeof spawnRawStdio>): Promise<boolean> {
    daemon.connection.end();
    const code = await Promise.race([daemon.exitCode, new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), CLOSE_WAIT_MS))]);
    if (code === "hung") daemon.process.kill("SIGKILL");
    return code !== "hung";
  }

  it.each(["framing", "json-rpc"] as const)(
    "handles every %s case of the catalogue",
    async (area) => {
      if (acknowledged.length === 0) await freshDaemon().then(retire); // the session the daemons append to
      {
        const cases = CATALOGUE.filter((testCase) => testCase.area === area);
        const results: { ok: boolean; hung: boolean; why: string }[] = [];
        // Messages the daemon answers leave it running: one daemon serves all of them in turn.
        const answered = cases.filter((testCase) => testCase.expect.kind === "answer");
        if (answered.length > 0) {
          const shared = await freshDaemon();
          for (const testCase of answered) results.push(await runCase(shared, testCase));
          if (!(await retire(shared))) results.push({ ok: true, hung: true, why: "the daemon did not exit after the client left" });
        }
        // Frames that end the daemon: one daemon each, a few at a time.
        const closing = cases.filter((testCase) => testCase.expect.kind !== "answer");
        for (let start = 0; start < closing.length; start += STDIO_PARALLEL) {
          const group = closing.slice(start, start + STDIO_PARALLEL);
          results.push(
            ...(await Promise.all(
              group.map(async (testCase) => {
                const daemon = await freshDaemon();
                const result = await runCase(daemon, testCase);
                return (await retire(daemon)) ? result : { ...result, hung: true };
              }),
            )),
          );
        }
        const survived = results.filter((result) => result.ok).length;
        const lost = results.filter((result) => result.hung).length;
        recordScore({
          area: area === "framing" ? "framing (stdio)" : "json-rpc",
          scenario: `catalogue over stdio (${cases.length} kinds)`,
          tried: cases.length,
          survived,
          lost,
        });
        expect(results.filter((result) => !result.ok || result.hung).map((result) => result.why)).toEqual([]);
      }
    },
    STDIO_TEST_TIMEOUT_MS,
  );

  async function runCase(daemon: Awaited<ReturnType<typeof freshDaemon>>, testCase: FramingCase) {
    const before = daemon.connection.responses().length;
    const { outcome } = await probe(daemon.connection, testCase.bytes, () => daemon.connection.end(), probeWait(testCase));
    const exitCode = outcome === "closed" || outcome === "closed-on-end" ? await daemon.exitCode : undefined;
    const ok = asExpected(testCase, outcome, daemon.connection.responses().slice(before)) && (exitCode === undefined || exitCode === 1);
    return {
      ok,
      hung: outcome === "hung",
      why: `${testCase.name}: ${outcome} (exit ${String(exitCode)}); stderr: ${daemon.stderr().slice(-300)}`,
    };
  }

  it(
    `survives ${RANDOM_STDIO_FRAMES} random frames (seed ${SEED})`,
    async () => {
      const frames = randomFrames(SEED, RANDOM_STDIO_FRAMES);
      let survived = 0;
      let lost = 0;
      const failures: string[] = [];
      let daemon = await freshDaemon();
      for (const [index, random] of frames.entries()) {
        if (daemon.connection.closed) daemon = await freshDaemon();
        const { outcome } = await probe(daemon.connection, random.bytes, () => daemon.connection.end(), RANDOM_PROBE_WAIT_MS);
        if (outcome === "answered") {
          survived++;
          continue;
        }
        const exitCode = outcome === "hung" ? undefined : await daemon.exitCode;
        // An unreadable frame (or a random `exit`) ends a stdio daemon with 1; anything else is a crash.
        if (exitCode === 0 || exitCode === 1) survived++;
        else {
          lost++;
          failures.push(`frame ${index} (${random.kind}): ${outcome}, exit ${String(exitCode)}; stderr: ${daemon.stderr().slice(-300)}`);
          if (outcome === "hung") daemon.process.kill("SIGKILL");
        }
      }
      if (!(await retire(daemon))) lost++;

      // Every acknowledged append of every daemon of this file is in the store.
      const check = spawnRawStdio(home);
      await check.connection.request("init", "initialize", INITIALIZE);
      const path = await check.connection.request("path", "session/path", { sessionId: "fuzz-stdio" });
      const stored = new Set((path.result as { entries: { id: string }[] }).entries.map((entry) => entry.id));
      const missing = acknowledged.filter((id) => !stored.has(id));
      lost += missing.length;
      await retire(check);

      recordScore({ area: "framing (stdio)", scenario: `random frames, seed ${SEED}`, tried: frames.length, survived, lost });
      expect(failures).toEqual([]);
      expect(missing).toEqual([]);
      expect(lost).toBe(0);
    },
    STDIO_TEST_TIMEOUT_MS,
  );
});

/** One connection to the socket daemon at `path`, initialized, that gets `bytes` and a probe. */
async function attackOverSocket(path: string, bytes: Buffer, waitMs: number) {
  const { socket, connection } = await connectRaw(path);
  await connection.request("init", "initialize", INITIALIZE);
  const before = connection.responses().length;
  const { outcome } = await probe(connection, bytes, () => socket.end(), waitMs);
  const replies = connection.responses().slice(before);
  // A connection the daemon keeps must still be closed by it when the client leaves.
  let leftOpen = false;
  if (outcome === "answered") {
    socket.end();
    leftOpen = await waitFor(() => connection.closed, { timeoutMs: CLOSE_WAIT_MS }).then(
      () => false,
      () => true,
    );
  }
  socket.destroy();
  return { outcome, replies, leftOpen };
}

/** Rows of tried / survived / lost per scenario key, and what failed. */
function tallies() {
  const rows: Record<string, { tried: number; survived: number; lost: number }> = {};
  const failures: string[] = [];
  const tally = (key: string, ok: boolean, lostOne: boolean, why: string) => {
    const row = (rows[key] ??= { tried: 0, survived: 0, lost: 0 });
    row.tried++;
    if (ok) row.survived++;
    if (lostOne) row.lost++;
    if (!ok || lostOne) failures.push(`${key}: ${why}`);
  };
  return { rows, failures, tally };
}

describe("framing fuzzer over a socket", () => {
  it("handles the catalogue and random frames, one connection each, without disturbing the others or leaking descriptors", async () => {
    const home = dirs.make("bc-fuzz-socket-");
    writeFileSync(join(home, "settings.json"), JSON.stringify(SETTINGS));
    const daemon = await spawnRawSocketDaemon(home);
    try {
      const bystander = await connectRaw(daemon.path);
      await bystander.connection.request("init", "initialize", INITIALIZE);
      await bystander.connection.request("create", "session/create", { cwd: "/fuzz", id: "fuzz-socket" });
      const acknowledged: string[] = [];
      let appends = 0;
      const appendOne = async () => {
        const reply = await bystander.connection.request(`ack-${++appends}`, "entry/append", {
          sessionId: "fuzz-socket",
          entry: { type: "message", message: { role: "user", content: `ack ${appends}` } },
        });
        acknowledged.push((reply.result as { entry: { id: string } }).entry.id);
      };
      // Two appends: on PostgreSQL the first reads the session (the worker's connection), the next
      // is committed on the daemon's own (store/postgres/event-loop-commits.ts). Both are then
      // open, and counted before the fuzzer's.
      await appendOne();
      await appendOne();
      const fdsBefore = await openSockets(daemon.process.pid!);

      const attack = (bytes: Buffer, waitMs: number) => attackOverSocket(daemon.path, bytes, waitMs);
      const { rows, failures, tally } = tallies();
      for (const testCase of CATALOGUE) {
        const { outcome, replies, leftOpen } = await attack(testCase.bytes, probeWait(testCase));
        const key = testCase.area === "framing" ? "framing (socket)|catalogue" : "json-rpc|catalogue over a socket";
        tally(
          key,
          asExpected(testCase, outcome, replies) && !leftOpen,
          outcome === "hung" || leftOpen,
          `${testCase.name}: ${outcome}${leftOpen ? ", left open" : ""}`,
        );
      }
      await appendOne();

      const frames = randomFrames(SEED, RANDOM_SOCKET_FRAMES);
      const BATCH = 10;
      for (let start = 0; start < frames.length; start += BATCH) {
        const batch = frames.slice(start, start + BATCH);
        const results = await Promise.all(batch.map((random) => attack(random.bytes, RANDOM_PROBE_WAIT_MS)));
        results.forEach(({ outcome, leftOpen }, index) => {
          tally(
            "framing (socket)|random",
            outcome !== "hung" && !leftOpen,
            outcome === "hung" || leftOpen,
            `frame ${start + index} (${batch[index]!.kind}): ${outcome}`,
          );
        });
        await appendOne();
      }

      // The daemon is alive, the bystander was never disturbed, every acknowledged append is there.
      expect(daemon.process.exitCode).toBeNull();
      const path = await bystander.connection.request("path", "session/path", { sessionId: "fuzz-socket" });
      const stored = new Set((path.result as { entries: { id: string }[] }).entries.map((entry) => entry.id));
      const missing = acknowledged.filter((id) => !stored.has(id));
      if (missing.length > 0) failures.push(`acknowledged appends missing: ${missing.join(", ")}`);
      // Every connection the fuzzer opened was closed and its descriptor released.
      let leakedFds = 0;
      if (fdsBefore !== undefined) {
        await waitFor(async () => ((await openSockets(daemon.process.pid!)) ?? 0) <= fdsBefore, { timeoutMs: CLOSE_WAIT_MS }).catch(
          async () => {
            leakedFds = ((await openSockets(daemon.process.pid!)) ?? 0) - fdsBefore;
            failures.push(`${leakedFds} sockets not released`);
          },
        );
      }

      const scenarios: Record<string, string> = {
        "framing (socket)|catalogue": `catalogue over a socket (${CATALOGUE.filter((c) => c.area === "framing").length} kinds)`,
        "json-rpc|catalogue over a socket": `catalogue over a socket (${CATALOGUE.filter((c) => c.area === "json-rpc").length} kinds)`,
        "framing (socket)|random": `random frames, seed ${SEED}, + ${acknowledged.length} acknowledged appends`,
      };
      for (const [key, row] of Object.entries(rows)) {
        const [area] = key.split("|");
        const extraLost = key === "framing (socket)|random" ? missing.length + Math.max(0, leakedFds) : 0;
        recordScore({ area: area!, scenario: scenarios[key]!, tried: row.tried, survived: row.survived, lost: row.lost + extraLost });
      }
      expect(failures).toEqual([]);
    } finally {
      daemon.process.kill("SIGKILL");
      await daemon.exitCode;
    }
  });
});
