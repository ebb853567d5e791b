/**
 * Megabytes where a short string belongs (docs/guarantees.md, "Protocol and connections"): a
 * 50 MB method name, id, `jsonrpc` value, id field, path, name or unknown key is answered with a
 * short error that quotes at most a prefix of it, and the daemon goes on. How fast is measured by
 * bench/bounded.mjs; here only the size of the reply and the daemon's health are checked.
 */
import { ErrorCodes } from "@base-context/protocol";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { frame, INITIALIZE, spawnRawStdio, type RawStdioDaemon } from "../support/raw-daemon.js";
import { tempDirs } from "../support/temp-dir.js";
import { recordScore } from "./scoreboard.js";

const dirs = tempDirs();
let daemon: RawStdioDaemon | undefined;
afterAll(async () => {
  daemon?.process.kill("SIGKILL");
  await daemon?.exitCode;
  dirs.cleanup();
});

const HUGE = "m".repeat(50 * 1024 * 1024);
const MAX_REPLY_BYTES = 64 * 1024;

interface Case {
  name: string;
  /** The request body (its id is 7 unless the case is about the id). */
  body: () => string;
  code: number;
  /** The reply's id: null when the id itself could not be echoed. */
  id: number | null;
  /** Part of the error message. */
  says: RegExp;
}

const CASES: Case[] = [
  { name: "method name", body: () => `{"jsonrpc":"2.0","id":7,"method":"${HUGE}"}`, code: ErrorCodes.MethodNotFound, id: 7, says: /\(52428800 characters\)/ },
  { name: "string id", body: () => `{"jsonrpc":"2.0","id":"${HUGE}","method":"session/get"}`, code: ErrorCodes.InvalidRequest, id: null, says: /longer than 256/ },
  { name: '"jsonrpc" value', body: () => `{"jsonrpc":"${HUGE}","id":7,"method":"session/get"}`, code: ErrorCodes.InvalidRequest, id: 7, says: /\(52428800 characters\)/ },
  { name: "sessionId", body: () => `{"jsonrpc":"2.0","id":7,"method":"session/get","params":{"sessionId":"${HUGE}"}}`, code: ErrorCodes.InvalidParams, id: 7, says: /"sessionId": an id is at most 256/ },
  { name: "cwd", body: () => `{"jsonrpc":"2.0","id":7,"method":"session/create","params":{"cwd":"${HUGE}"}}`, code: ErrorCodes.InvalidParams, id: 7, says: /"cwd": a path is at most 4096 bytes/ },
  { name: "session name", body: () => `{"jsonrpc":"2.0","id":7,"method":"session/create","params":{"cwd":"/p","name":"${HUGE}"}}`, code: ErrorCodes.InvalidParams, id: 7, says: /"name"/ },
  { name: "import path", body: () => `{"jsonrpc":"2.0","id":7,"method":"session/import","params":{"format":"pi-jsonl","path":"${HUGE}"}}`, code: ErrorCodes.InvalidParams, id: 7, says: /"path": a path is at most 4096 bytes/ },
  { name: "unknown key in params", body: () => `{"jsonrpc":"2.0","id":7,"method":"settings/get","params":{"${HUGE}":1}}`, code: 0, id: 7, says: /./ },
  { name: "label", body: () => `{"jsonrpc":"2.0","id":7,"method":"label/set","params":{"sessionId":"s","targetId":"t","label":"${HUGE}"}}`, code: ErrorCodes.InvalidParams, id: 7, says: /"label"/ },
];

describe("50 MB where a short string belongs", { timeout: 600_000 }, () => {
  it("each is answered with a reply under 64 KB and the daemon goes on; a 4097-byte cwd is refused with -32602", async () => {
    const home = dirs.make("bc-huge-");
    writeFileSync(join(home, "settings.json"), "{}");
    daemon = spawnRawStdio(home);
    const { connection } = daemon;
    expect((await connection.request(0, "initialize", INITIALIZE)).result).toBeDefined();
    let survived = 0;
    for (const testCase of CASES) {
      connection.replies.length = 0;
      const body = Buffer.from(testCase.body(), "utf8");
      connection.write(frame(body));
      const reply = await connection.reply(testCase.id, 300_000);
      const replyBytes = Buffer.byteLength(JSON.stringify(reply));
      expect(replyBytes, testCase.name).toBeLessThan(MAX_REPLY_BYTES);
      if (testCase.code !== 0) {
        expect(reply.error?.code, testCase.name).toBe(testCase.code);
        expect(reply.error?.message, testCase.name).toMatch(testCase.says);
      }
      // Still answering.
      expect((await connection.request(1, "settings/get", {})).result, testCase.name).toBeDefined();
      survived++;
    }
    const long = await connection.request(2, "session/create", { cwd: `/${"d".repeat(4096)}` });
    expect(long.error).toMatchObject({ code: ErrorCodes.InvalidParams, data: { code: "invalid_params", issues: [{ path: "cwd" }] } });
    const multibyte = await connection.request(3, "session/create", { cwd: `/${"é".repeat(2048)}` });
    expect(multibyte.error?.message).toContain("a path is at most 4096 bytes (UTF-8)");
    recordScore({ area: "huge input", scenario: "50 MB method, id, jsonrpc, id and path fields, name, label, key", tried: CASES.length, survived, lost: 0 });
  });
});
