/**
 * What the framing fuzzer sends: a catalogue of malformed frames and invalid JSON-RPC messages,
 * each with what the daemon must do, and random frames from a seeded generator (the same seed
 * gives the same frames, so a failure can be replayed).
 */
import { frame } from "../support/raw-daemon.js";

/**
 * - "answer": the connection stays usable; each of `errors` (JSON-RPC code, data.code) is answered.
 * - "close": the frame cannot be read; the daemon answers `invalid_frame`/`message_too_large`
 *   (id null) and closes the connection (stdio: exits 1).
 * - "close-on-end": the frame claims more bytes than come; the daemon waits like for a slow
 *   client, and closes once the client ends its side.
 */
export type Expectation =
  | { kind: "answer"; errors: [number, string][] }
  | { kind: "close"; dataCode: "invalid_frame" | "message_too_large" }
  | { kind: "close-on-end" };

export interface FramingCase {
  name: string;
  area: "framing" | "json-rpc";
  bytes: Buffer;
  expect: Expectation;
}

const raw = (text: string) => Buffer.from(text, "latin1");
const body = (text: string) => frame(text);
const invalid: [number, string][] = [[-32600, "invalid_request"]];

export const CATALOGUE: FramingCase[] = [
  {
    name: "Content-Length: abc",
    area: "framing",
    bytes: raw("Content-Length: abc\r\n\r\n{}"),
    expect: { kind: "close", dataCode: "invalid_frame" },
  },
  {
    name: "negative Content-Length",
    area: "framing",
    bytes: raw("Content-Length: -5\r\n\r\n{}"),
    expect: { kind: "close", dataCode: "invalid_frame" },
  },
  {
    name: "hex Content-Length",
    area: "framing",
    bytes: raw("Content-Length: 0x1f\r\n\r\n{}"),
    expect: { kind: "close", dataCode: "invalid_frame" },
  },
  {
    name: "float Content-Length",
    area: "framing",
    bytes: raw("Content-Length: 2.5\r\n\r\n{}"),
    expect: { kind: "close", dataCode: "invalid_frame" },
  },
  {
    name: "missing Content-Length",
    area: "framing",
    bytes: raw("Content-Type: application/json\r\n\r\n{}"),
    expect: { kind: "close", dataCode: "invalid_frame" },
  },
  {
    name: "LF-only header",
    area: "framing",
    bytes: raw('Content-Length: 40\n\n{"jsonrpc":"2.0","id":1,"method":"x"}   '),
    expect: { kind: "close", dataCode: "invalid_frame" },
  },
  {
    name: "header over 8 KB",
    area: "framing",
    bytes: raw(`X-Filler: ${"f".repeat(9000)}\r\nContent-Length: 2\r\n\r\n{}`),
    expect: { kind: "close", dataCode: "invalid_frame" },
  },
  {
    name: "Content-Length 2^40",
    area: "framing",
    bytes: raw(`Content-Length: ${2 ** 40}\r\n\r\n${"z".repeat(64 * 1024)}`),
    expect: { kind: "close", dataCode: "message_too_large" },
  },
  // 2 bytes claimed, 30 sent: the rest is read as the next header, which it is not.
  {
    name: "Content-Length shorter than the body",
    area: "framing",
    bytes: frame('{"jsonrpc":"2.0","method":"x"}', 2),
    expect: { kind: "close", dataCode: "invalid_frame" },
  },
  { name: "Content-Length longer than the body", area: "framing", bytes: frame("{}", 5000), expect: { kind: "close-on-end" } },
  { name: "body not JSON", area: "json-rpc", bytes: body("{not json"), expect: { kind: "answer", errors: [[-32700, "parse_error"]] } },
  { name: "empty body", area: "json-rpc", bytes: body(""), expect: { kind: "answer", errors: [[-32700, "parse_error"]] } },
  { name: "[]", area: "json-rpc", bytes: body("[]"), expect: { kind: "answer", errors: invalid } },
  {
    name: "batch",
    area: "json-rpc",
    bytes: body('[{"jsonrpc":"2.0","id":"b1","method":"session/list","params":{}}]'),
    expect: { kind: "answer", errors: invalid },
  },
  { name: "42", area: "json-rpc", bytes: body("42"), expect: { kind: "answer", errors: invalid } },
  { name: '"hi"', area: "json-rpc", bytes: body('"hi"'), expect: { kind: "answer", errors: invalid } },
  { name: "null", area: "json-rpc", bytes: body("null"), expect: { kind: "answer", errors: invalid } },
  {
    name: '"method": 5',
    area: "json-rpc",
    bytes: body('{"jsonrpc":"2.0","id":"m5","method":5}'),
    expect: { kind: "answer", errors: invalid },
  },
  {
    name: "boolean id",
    area: "json-rpc",
    bytes: body('{"jsonrpc":"2.0","id":true,"method":"session/list","params":{}}'),
    expect: { kind: "answer", errors: invalid },
  },
  {
    name: "object id",
    area: "json-rpc",
    bytes: body('{"jsonrpc":"2.0","id":{"a":1},"method":"session/list","params":{}}'),
    expect: { kind: "answer", errors: invalid },
  },
  {
    name: "array id",
    area: "json-rpc",
    bytes: body('{"jsonrpc":"2.0","id":[1],"method":"session/list","params":{}}'),
    expect: { kind: "answer", errors: invalid },
  },
  {
    name: "no jsonrpc member",
    area: "json-rpc",
    bytes: body('{"id":"nj","method":"session/list","params":{}}'),
    expect: { kind: "answer", errors: invalid },
  },
  {
    name: "params a string",
    area: "json-rpc",
    bytes: body('{"jsonrpc":"2.0","id":"ps","method":"session/list","params":"bar"}'),
    expect: { kind: "answer", errors: invalid },
  },
  {
    name: "duplicate id in flight",
    area: "json-rpc",
    bytes: Buffer.concat([
      body('{"jsonrpc":"2.0","id":"dup","method":"session/list","params":{}}'),
      body('{"jsonrpc":"2.0","id":"dup","method":"session/list","params":{}}'),
    ]),
    expect: { kind: "answer", errors: [[-32600, "duplicate_request_id"]] },
  },
];

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const METHODS = [
  "session/list",
  "session/get",
  "entry/append",
  "context/build",
  "initialize",
  "shutdown",
  "exit",
  "$/cancelRequest",
  "no/such",
  "initialized",
];
const KEYS = ["jsonrpc", "id", "method", "params", "result", "error", "sessionId", "entry", "x"];
const WEIRD_LENGTHS = ["", "-1", "0x10", "1e3", "12.0", " 7 7", "٣", "99999999999999999999", "NaN", "+5", "5,5"];

export interface RandomFrame {
  bytes: Buffer;
  /** What kind of frame it is, for failure messages. */
  kind: string;
}

/** Random frames: well-framed random JSON and bytes, mangled headers and lengths, garbage. */
export function randomFrames(seed: number, count: number): RandomFrame[] {
  const random = seededRandom(seed);
  const int = (below: number) => Math.floor(random() * below);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const value = (depth: number): unknown => {
    const roll = int(depth > 2 ? 6 : 9);
    switch (roll) {
      case 0:
        return null;
      case 1:
        return random() < 0.5;
      case 2:
        return pick([0, 1, -1, 1.5, 2 ** 53, -0]);
      case 3:
        return pick(["2.0", "", "x", "é😀", ...METHODS]);
      case 4:
        return int(1000);
      case 5:
        return pick(["probe", "1", "a".repeat(int(50))]);
      case 6:
        return Array.from({ length: int(4) }, () => value(depth + 1));
      default: {
        const object: Record<string, unknown> = {};
        for (let index = int(5); index > 0; index--) object[pick(KEYS)] = value(depth + 1);
        return object;
      }
    }
  };
  const message = (): string => {
    // Mostly message-shaped objects, so the interesting paths are reached.
    if (random() < 0.3) return JSON.stringify(value(0));
    const object: Record<string, unknown> = { jsonrpc: random() < 0.9 ? "2.0" : value(2) };
    if (random() < 0.8) object.method = random() < 0.85 ? pick(METHODS) : value(2);
    if (random() < 0.7) object.id = random() < 0.7 ? `r${int(1_000_000)}` : value(2);
    if (random() < 0.7) object.params = random() < 0.7 ? { sessionId: "nope", ...(value(1) as object) } : value(1);
    return JSON.stringify(object) ?? "null";
  };
  const frames: RandomFrame[] = [];
  for (let index = 0; index < count; index++) {
    const roll = int(10);
    if (roll < 4) {
      frames.push({ kind: "random JSON", bytes: frame(message()) });
    } else if (roll === 4) {
      const bytes = Buffer.from(Array.from({ length: int(200) }, () => int(256)));
      frames.push({ kind: "random bytes body", bytes: frame(bytes) });
    } else if (roll === 5) {
      const text = message();
      frames.push({ kind: "weird Content-Length", bytes: Buffer.from(`Content-Length: ${pick(WEIRD_LENGTHS)}\r\n\r\n${text}`, "utf8") });
    } else if (roll === 6) {
      const text = Buffer.from(message(), "utf8");
      frames.push({ kind: "length off by a few", bytes: frame(text, Math.max(0, text.length + int(11) - 5)) });
    } else if (roll === 7) {
      const text = Buffer.from(message(), "utf8");
      const extra = pick([
        "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n",
        "X-Anything: 1\r\n",
        "content-length: " + text.length + "\r\n",
        "",
      ]);
      frames.push({
        kind: "extra header",
        bytes: Buffer.concat([Buffer.from(`Content-Length: ${text.length}\r\n${extra}\r\n`, "latin1"), text]),
      });
    } else if (roll === 8) {
      frames.push({ kind: "garbage", bytes: Buffer.from(Array.from({ length: 1 + int(300) }, () => int(256))) });
    } else {
      const text = message();
      frames.push({ kind: "LF header", bytes: Buffer.from(`Content-Length: ${Buffer.byteLength(text)}\n\n${text}`, "utf8") });
    }
  }
  return frames;
}
