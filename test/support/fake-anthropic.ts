/**
 * A local Anthropic Messages API server for tests that drive the real Claude Code (there is no
 * real model here). node:http only, bound to 127.0.0.1 on a random port. Every request is
 * recorded; each `POST /v1/messages` is answered by the test's `respond` function, streamed as
 * server-sent events when the request asks for a stream (Claude Code always does), else as one
 * JSON message. `POST /v1/messages/count_tokens` answers a rough count; anything else is a 404.
 *
 *   const fake = await startFakeAnthropic((request) => ({ content: [{ type: "text", text: "Hi" }] }));
 *   spawn("claude", ["-p", "hello"], { env: { ANTHROPIC_BASE_URL: fake.baseURL, ANTHROPIC_API_KEY: "test" } });
 *   …
 *   await fake.close();
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A content block of a request's message (as the Messages API has it). */
export interface AnthropicBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
  [key: string]: unknown;
}

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicBlock[];
}

export interface AnthropicRequestBody {
  model?: string;
  system?: unknown;
  messages?: AnthropicMessage[];
  tools?: Array<{ name: string; [key: string]: unknown }>;
  stream?: boolean;
  max_tokens?: number;
  [key: string]: unknown;
}

export interface RecordedAnthropicRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: AnthropicRequestBody | undefined;
}

/** What the fake model answers: its content blocks (text, thinking, tool_use) and stop reason. */
export interface AnthropicReply {
  readonly content: ReadonlyArray<
    | { readonly type: "text"; readonly text: string }
    | { readonly type: "thinking"; readonly thinking: string }
    | { readonly type: "tool_use"; readonly name: string; readonly input: Readonly<Record<string, unknown>>; readonly id?: string }
  >;
  /** Default: "tool_use" when the content calls a tool, else "end_turn". */
  readonly stopReason?: string;
  /** An HTTP error instead of a message. */
  readonly error?: { readonly status: number; readonly type: string; readonly message: string };
}

export type Respond = (request: AnthropicRequestBody) => AnthropicReply;

export interface FakeAnthropic {
  /** `http://127.0.0.1:<port>`: Claude Code's ANTHROPIC_BASE_URL. */
  readonly baseURL: string;
  readonly requests: readonly RecordedAnthropicRequest[];
  close(): Promise<void>;
}

/** The text of a request message (its string, or its text blocks joined). */
export function messageText(message: AnthropicMessage | undefined): string {
  if (message === undefined) return "";
  if (typeof message.content === "string") return message.content;
  return message.content.flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : [])).join("\n");
}

/** The tool results a request message carries. */
export function toolResults(message: AnthropicMessage | undefined): AnthropicBlock[] {
  if (message === undefined || typeof message.content === "string") return [];
  return message.content.filter((block) => block.type === "tool_result");
}

export async function startFakeAnthropic(respond: Respond): Promise<FakeAnthropic> {
  const requests: RecordedAnthropicRequest[] = [];
  let messageCount = 0;
  let toolCount = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: AnthropicRequestBody | undefined;
    try {
      body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as AnthropicRequestBody) : undefined;
    } catch {
      body = undefined;
    }
    const path = (req.url ?? "/").split("?")[0]!;
    requests.push({ method: req.method ?? "", path, headers: req.headers, body });
    if (req.method === "POST" && path === "/v1/messages/count_tokens") {
      return sendJson(res, 200, { input_tokens: Math.ceil(chunks.reduce((n, c) => n + c.length, 0) / 4) });
    }
    if (req.method !== "POST" || path !== "/v1/messages" || body === undefined) {
      return sendJson(res, 404, { type: "error", error: { type: "not_found_error", message: `no ${req.method} ${path} here` } });
    }
    let reply: AnthropicReply;
    try {
      reply = respond(body);
    } catch (error) {
      return sendJson(res, 500, { type: "error", error: { type: "api_error", message: (error as Error).message } });
    }
    if (reply.error) {
      return sendJson(res, reply.error.status, { type: "error", error: { type: reply.error.type, message: reply.error.message } });
    }
    const content = reply.content.map((block) =>
      block.type === "tool_use" ? { ...block, id: block.id ?? `toolu_fake_${String(++toolCount).padStart(4, "0")}` } : block,
    );
    const stopReason = reply.stopReason ?? (content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn");
    const message = {
      id: `msg_fake_${String(++messageCount).padStart(4, "0")}`,
      type: "message",
      role: "assistant",
      model: body.model ?? "claude-fake",
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
    if (body.stream !== true) return sendJson(res, 200, message);
    streamMessage(res, message);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { type: "error", error: { type: "api_error", message: String(error) } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "request-id": "req_fake" });
  res.end(text);
}

/** The Messages API's stream: message_start, each block's start/delta/stop, message_delta, message_stop. */
type StreamedMessage = {
  content: ReadonlyArray<Record<string, unknown>>;
  stop_reason: string;
  usage: Record<string, number>;
} & Record<string, unknown>;

function streamMessage(res: ServerResponse, message: StreamedMessage): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": "req_fake" });
  const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send("message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } });
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      send("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
      send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
    } else if (block.type === "thinking") {
      send("content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
      send("content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: block.thinking } });
      send("content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature: "fake-signature" } });
    } else {
      send("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      send("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
    }
    send("content_block_stop", { type: "content_block_stop", index });
  });
  const delta = { stop_reason: message.stop_reason, stop_sequence: null };
  send("message_delta", { type: "message_delta", delta, usage: { output_tokens: message.usage.output_tokens } });
  send("message_stop", { type: "message_stop" });
  res.end();
}
