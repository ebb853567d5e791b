import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Message } from "vscode-jsonrpc/node";
import { FramingError } from "./message-guard.js";
import { createStreamConnection, StreamFrameReader, StreamFrameWriter } from "./stream-transport.js";

function frame(message: unknown, extraHeaders = ""): Buffer {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n${extraHeaders}\r\n`, "ascii"), body]);
}

/** Feeds `bytes` to a reader in the given chunk sizes and collects the messages and errors. */
function readAll(bytes: Buffer, chunkSizes: (index: number) => number) {
  const stream = new PassThrough();
  const reader = new StreamFrameReader(stream);
  const messages: Message[] = [];
  const errors: Error[] = [];
  reader.onError((error) => errors.push(error));
  reader.listen((message) => messages.push(message));
  for (let offset = 0, index = 0; offset < bytes.length; index++) {
    const size = Math.max(1, chunkSizes(index));
    stream.emit("data", bytes.subarray(offset, offset + size));
    offset += size;
  }
  return { messages, errors };
}

const request = (id: number, text: string): Message => ({ jsonrpc: "2.0", id, method: "entry/append", params: { text } } as Message);

describe("StreamFrameReader", () => {
  const messages = [request(1, "plain"), request(2, "héllo wörld 😀 — ünïcode"), request(3, "x".repeat(200_000) + "😀")];
  const bytes = Buffer.concat(
    messages.map((message, index) => frame(message, index === 1 ? "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" : "")),
  );

  it("reads messages however the bytes are chunked: one chunk, byte by byte, odd sizes", () => {
    for (const chunking of [() => bytes.length, () => 1, (index: number) => [3, 7, 65_536, 2, 13][index % 5]!]) {
      const { messages: read, errors } = readAll(bytes, chunking);
      expect(errors).toEqual([]);
      expect(read).toEqual(messages);
    }
  });

  it("reports a frame without Content-Length once and reads no further", () => {
    const broken = Buffer.concat([frame(request(1, "ok")), Buffer.from("Content-Type: text/plain\r\n\r\n{}"), frame(request(2, "lost"))]);
    const { messages: read, errors } = readAll(broken, () => 5);
    expect(read).toEqual([request(1, "ok")]);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/no Content-Length/);
  });

  it("reports a body that is not JSON and reads on: the framing is still in step", () => {
    const body = Buffer.from("{not json", "utf8");
    const bad = Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
    const { messages: read, errors } = readAll(Buffer.concat([frame(request(1, "before")), bad, frame(request(2, "after"))]), () => 7);
    expect(read).toEqual([request(1, "before"), request(2, "after")]);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/not JSON/);
  });

  it("reports a bad Content-Length and endless headers", () => {
    expect(readAll(Buffer.from("Content-Length: ten\r\n\r\n{}"), () => 100).errors[0]!.message).toMatch(/must be a number/);
    expect(readAll(Buffer.from("X".repeat(20_000)), () => 1000).errors[0]!.message).toMatch(/no end of the message header/);
  });
});

describe("StreamFrameWriter", () => {
  it("frames messages so vscode-jsonrpc's framing and ours read them back, large ones included", async () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    const writer = new StreamFrameWriter(stream);
    const big = request(9, `${"lorem ipsum ".repeat(50_000)}😀`);
    await writer.write(request(1, "small é"));
    await writer.write(big);
    const { messages, errors } = readAll(Buffer.concat(chunks), () => 65_536);
    expect(errors).toEqual([]);
    expect(messages).toEqual([request(1, "small é"), big]);
    // The header counts bytes, not characters.
    const text = Buffer.concat(chunks).toString("utf8");
    expect(text.startsWith(`Content-Length: ${Buffer.byteLength(JSON.stringify(request(1, "small é")))}\r\n\r\n`)).toBe(true);
  });

  it("rejects a message with no JSON form and keeps the stream usable", async () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    const writer = new StreamFrameWriter(stream);
    const errors: unknown[] = [];
    writer.onError((error) => errors.push(error));
    await expect(writer.write({ jsonrpc: "2.0", id: 1, result: 1n } as unknown as Message)).rejects.toThrow(TypeError);
    await writer.write(request(2, "after"));
    expect(errors).toHaveLength(1);
    expect(readAll(Buffer.concat(chunks), () => 100).messages).toEqual([request(2, "after")]);
  });
});

describe("createStreamConnection", () => {
  it("carries requests and large replies between two connections", async () => {
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    const server = createStreamConnection(toServer, toClient);
    const client = createStreamConnection(toClient, toServer);
    const context = {
      messages: Array.from({ length: 200 }, (_, index) => ({ role: "user", content: `${"word ".repeat(600)}${index} ✓` })),
    };
    server.onRequest("context/build", (params: { n: number }) => ({ ...context, n: params.n }));
    server.listen();
    client.listen();
    const [first, second] = await Promise.all([
      client.sendRequest("context/build", { n: 1 }),
      client.sendRequest("context/build", { n: 2 }),
    ]);
    expect(first).toEqual({ ...context, n: 1 });
    expect(second).toEqual({ ...context, n: 2 });
    client.dispose();
    server.dispose();
  });
});

describe("unreadable frames", () => {
  const malformed: [string, string][] = [
    ["Content-Length: abc\r\n\r\n{}", "must be a number"],
    ["Content-Length: -5\r\n\r\n{}", "must be a number"],
    ["Content-Length: 0x10\r\n\r\n{}", "must be a number"],
    ["Content-Length: 1.5\r\n\r\n{}", "must be a number"],
    ["Content-Length: \r\n\r\n{}", "must be a number"],
    ["Content-Type: application/json\r\n\r\n{}", "no Content-Length"],
    ["Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "two different Content-Length"],
    ["Content-Length: 2\n\n{}", "bare LF"],
    ["Content-Length: 2\r\n\n{}", "bare LF"],
    [`X-Padding: ${"x".repeat(9000)}\r\nContent-Length: 2\r\n\r\n{}`, "no end of the message header in 8 KB"],
  ];

  it("reports each as a FramingError (invalid_frame), once, however it is chunked, and lets go of the bytes", () => {
    for (const [bytes, message] of malformed) {
      for (const chunk of [1, 7, 100_000]) {
        const stream = new PassThrough();
        const reader = new StreamFrameReader(stream);
        const errors: Error[] = [];
        reader.onError((error) => errors.push(error));
        reader.listen(() => undefined);
        for (let offset = 0; offset < bytes.length; offset += chunk)
          stream.emit("data", Buffer.from(bytes.slice(offset, offset + chunk), "latin1"));
        expect(errors, `${JSON.stringify(bytes.slice(0, 40))} in chunks of ${chunk}`).toHaveLength(1);
        expect(errors[0]).toBeInstanceOf(FramingError);
        expect((errors[0] as FramingError).code).toBe("invalid_frame");
        expect(errors[0]!.message).toContain(message);
        expect(reader.bufferedBytes()).toBe(0);
      }
    }
  });

  it("refuses a Content-Length over maxMessageBytes at the header, before reading any of the body", () => {
    const stream = new PassThrough();
    let limit = 1000;
    const reader = new StreamFrameReader(stream, { maxMessageBytes: () => limit });
    const errors: Error[] = [];
    const read: Message[] = [];
    reader.onError((error) => errors.push(error));
    reader.listen((message) => read.push(message));
    stream.emit("data", frame(request(1, "x".repeat(50))));
    expect(read).toHaveLength(1);
    limit = 50;
    stream.emit("data", Buffer.from("Content-Length: 1099511627776\r\n\r\n" + "y".repeat(10_000)));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ name: "FramingError", code: "message_too_large" });
    expect(errors[0]!.message).toBe(
      "message of 1099511627776 bytes refused: the largest accepted is 50 bytes (setting limits.maxMessageBytes)",
    );
    expect(reader.bufferedBytes()).toBe(0);
    stream.emit("data", frame(request(2, "after")));
    expect(read).toHaveLength(1); // nothing is read after an unreadable frame
  });

  it("sets no size limit unless its owner does (a client reads whatever its daemon sends)", () => {
    const stream = new PassThrough();
    const reader = new StreamFrameReader(stream);
    const errors: Error[] = [];
    reader.onError((error) => errors.push(error));
    reader.listen(() => undefined);
    stream.emit("data", Buffer.from(`Content-Length: ${2 ** 40}\r\n\r\n{"jsonrpc":`));
    expect(errors).toEqual([]);
    expect(reader.bufferedBytes()).toBe(11);
  });

  it("lets go of a half-sent frame when the stream closes", () => {
    const stream = new PassThrough();
    const reader = new StreamFrameReader(stream);
    let closed = false;
    reader.onClose(() => (closed = true));
    reader.listen(() => undefined);
    stream.emit("data", Buffer.from(`Content-Length: 1000000\r\n\r\n${"z".repeat(300_000)}`));
    expect(reader.bufferedBytes()).toBe(300_000);
    stream.emit("close");
    expect(closed).toBe(true);
    expect(reader.bufferedBytes()).toBe(0);
  });
});

/** A serving connection over in-memory streams, fed raw bytes; collects what it writes back. */
function servingConnection(handler: (method: string, params: unknown) => unknown) {
  const input = new PassThrough();
  const output = new PassThrough();
  const connection = createStreamConnection(input, output, { answerInvalidMessages: true });
  connection.onRequest((method, params) => handler(method, params));
  connection.listen();
  let text = "";
  output.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  const replies = () =>
    text
      .split(/Content-Length: \d+\r\n\r\n/)
      .filter(Boolean)
      .map((body) => JSON.parse(body) as Record<string, unknown>);
  const send = (body: string) => input.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  return { connection, send, replies, input };
}

describe("answering messages that are not JSON-RPC requests", () => {
  it("answers each with its error and id null (-32700 for not JSON, -32600 for the rest), and goes on serving", async () => {
    const { connection, send, replies } = servingConnection(() => "ok");
    const cases: [string, number, string][] = [
      ["{not json", -32700, "parse_error"],
      ["", -32700, "parse_error"],
      ["[]", -32600, "invalid_request"],
      ['[{"jsonrpc":"2.0","id":1,"method":"a"}]', -32600, "invalid_request"],
      ["42", -32600, "invalid_request"],
      ['"hi"', -32600, "invalid_request"],
      ["null", -32600, "invalid_request"],
      ['{"jsonrpc":"2.0","method":5}', -32600, "invalid_request"],
      ['{"jsonrpc":"2.0","id":true,"method":"a"}', -32600, "invalid_request"],
      ['{"jsonrpc":"2.0","id":{"x":1},"method":"a"}', -32600, "invalid_request"],
      ['{"jsonrpc":"2.0","id":[1],"method":"a"}', -32600, "invalid_request"],
      ['{"jsonrpc":"2.0","id":null,"method":"a"}', -32600, "invalid_request"],
      ['{"jsonrpc":"2.0"}', -32600, "invalid_request"],
      ['{"jsonrpc":"2.0","params":{}}', -32600, "invalid_request"],
    ];
    for (const [body] of cases) send(body);
    send('{"jsonrpc":"2.0","id":99,"method":"still/there"}');
    await waitForReplies(replies, cases.length + 1);
    const got = replies();
    cases.forEach(([body, code, dataCode], index) => {
      expect(got[index], body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code, data: { code: dataCode } } });
    });
    expect(got[cases.length]).toEqual({ jsonrpc: "2.0", id: 99, result: "ok" });
    connection.dispose();
  });

  it("answers a request with params that are not structured with its own id", async () => {
    const { connection, send, replies } = servingConnection(() => "ok");
    send('{"jsonrpc":"2.0","id":7,"method":"a","params":"bar"}');
    await waitForReplies(replies, 1);
    expect(replies()[0]).toMatchObject({ id: 7, error: { code: -32600, data: { code: "invalid_request" } } });
    connection.dispose();
  });

  it("rejects a second request with the id of one in flight, and the first still completes; the id is free again after its reply", async () => {
    const gates: (() => void)[] = [];
    const { connection, send, replies } = servingConnection(
      (_method, params) => new Promise((resolve) => gates.push(() => resolve(params))),
    );
    send('{"jsonrpc":"2.0","id":1,"method":"slow","params":{"n":"first"}}');
    send('{"jsonrpc":"2.0","id":1,"method":"slow","params":{"n":"second"}}');
    send('{"jsonrpc":"2.0","id":"1","method":"slow","params":{"n":"string id"}}');
    await waitForReplies(replies, 2);
    // "1" and 1 are one id to vscode-jsonrpc's queue, so both are refused while 1 is in flight.
    expect(replies()).toMatchObject([
      { id: 1, error: { code: -32600, data: { code: "duplicate_request_id" } } },
      { id: "1", error: { code: -32600, data: { code: "duplicate_request_id" } } },
    ]);
    await waitFor(() => gates.length === 1);
    gates[0]!();
    await waitForReplies(replies, 3);
    expect(replies()[2]).toEqual({ jsonrpc: "2.0", id: 1, result: { n: "first" } });
    send('{"jsonrpc":"2.0","id":1,"method":"slow","params":{"n":"again"}}');
    await waitFor(() => gates.length === 2);
    gates[1]!();
    await waitForReplies(replies, 4);
    expect(replies()[3]).toEqual({ jsonrpc: "2.0", id: 1, result: { n: "again" } });
    connection.dispose();
  });

  it("says why before a connection with an unreadable frame is closed", async () => {
    const { connection, input, replies } = servingConnection(() => "ok");
    const errors: Error[] = [];
    connection.onError(([error]) => errors.push(error));
    input.write("Content-Length: abc\r\n\r\n");
    await waitForReplies(replies, 1);
    expect(replies()[0]).toMatchObject({ id: null, error: { code: -32600, data: { code: "invalid_frame" } } });
    expect(errors[0]).toBeInstanceOf(FramingError);
    connection.dispose();
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let tries = 0; !check(); tries++) {
    if (tries > 500) throw new Error("condition not met");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

function waitForReplies(replies: () => unknown[], count: number): Promise<void> {
  return waitFor(() => replies().length >= count);
}
