import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Message } from "vscode-jsonrpc/node";
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
  const bytes = Buffer.concat(messages.map((message, index) => frame(message, index === 1 ? "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" : "")));

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
    const context = { messages: Array.from({ length: 200 }, (_, index) => ({ role: "user", content: `${"word ".repeat(600)}${index} ✓` })) };
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
