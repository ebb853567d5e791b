/**
 * A local OpenAI-compatible chat-completions server for tests (there is no real model here).
 * node:http only, bound to 127.0.0.1 on a random port. Every request is recorded; what the
 * server answers is scripted per request: text, tool calls, status errors with OpenAI-style bodies,
 * delays, hanging until the client gives up, dropped connections, or a queued sequence of those.
 *
 *   const fake = await startFakeOpenAI();
 *   fake.enqueue(reply.rateLimited({ retryAfterMs: 10 }), reply.text("## Goal\n…"));
 *   const client = new OpenAI({ baseURL: fake.baseURL, apiKey: "test" });
 *   …
 *   await fake.close();
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { useSuiteResource } from "./suite-resource.js";

/** The parts of a chat-completions request body tests look at; everything else is kept too. */
export interface FakeChatRequestBody {
  model?: string;
  messages?: Array<{ role: string; content: unknown; tool_calls?: FakeSentToolCall[]; tool_call_id?: string }>;
  tools?: Array<{ type: string; function?: { name: string; description?: string; parameters?: unknown } }>;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  reasoning_effort?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

/** A tool call as a client sends it back in an assistant message. */
export interface FakeSentToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

/** A tool call the fake model makes: `arguments` as an object, or as raw text (e.g. invalid JSON). */
export interface FakeToolCall {
  /** Default: a fresh `call_fake_N`. */
  readonly id?: string;
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>> | string;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body; undefined when there was none or it was not JSON. */
  readonly body: FakeChatRequestBody | undefined;
  /** True once the client closed the connection before the reply was complete. */
  disconnected: boolean;
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export type FakeReply =
  | {
      readonly kind: "text";
      readonly text: string;
      readonly finishReason?: string;
      readonly usage?: Partial<FakeUsage>;
      readonly delayMs?: number;
    }
  | {
      readonly kind: "error";
      readonly status: number;
      readonly message: string;
      readonly type?: string;
      readonly code?: string | null;
      readonly headers?: Readonly<Record<string, string>>;
      readonly delayMs?: number;
    }
  /** An assistant message with tool calls (finish_reason "tool_calls"), optionally with text. */
  | {
      readonly kind: "toolCalls";
      readonly calls: readonly FakeToolCall[];
      readonly text?: string;
      readonly usage?: Partial<FakeUsage>;
      readonly delayMs?: number;
    }
  /** Any status and body, for servers that are only "mostly" compatible. */
  | { readonly kind: "raw"; readonly status: number; readonly body: string; readonly delayMs?: number }
  /** Never answers; the request ends when the client disconnects (cancellation, timeouts). */
  | { readonly kind: "hang" }
  /** Destroys the socket without answering (a network error for the client). */
  | { readonly kind: "disconnect" };

export type FakeHandler = (request: RecordedRequest, index: number) => FakeReply | Promise<FakeReply>;

/** Builders for the replies above. */
export const reply = {
  text: (text: string, extra: Omit<Extract<FakeReply, { kind: "text" }>, "kind" | "text"> = {}): FakeReply => ({
    kind: "text",
    text,
    ...extra,
  }),
  /** The model calls tools: `reply.toolCalls([{ name: "read", arguments: { path: "a.md" } }])`. */
  toolCalls: (
    calls: readonly FakeToolCall[],
    extra: Omit<Extract<FakeReply, { kind: "toolCalls" }>, "kind" | "calls"> = {},
  ): FakeReply => ({
    kind: "toolCalls",
    calls,
    ...extra,
  }),
  error: (
    status: number,
    message: string,
    extra: Omit<Extract<FakeReply, { kind: "error" }>, "kind" | "status" | "message"> = {},
  ): FakeReply => ({
    kind: "error",
    status,
    message,
    ...extra,
  }),
  /** 429 with `retry-after` (seconds) or `retry-after-ms`, as OpenAI sends them. */
  rateLimited: (
    wait: { retryAfterSeconds?: number; retryAfterMs?: number } = {},
    message = "Rate limit reached for requests",
  ): FakeReply => {
    const headers: Record<string, string> = {};
    if (wait.retryAfterSeconds !== undefined) headers["retry-after"] = String(wait.retryAfterSeconds);
    if (wait.retryAfterMs !== undefined) headers["retry-after-ms"] = String(wait.retryAfterMs);
    return { kind: "error", status: 429, message, type: "requests", code: "rate_limit_exceeded", headers };
  },
  serverError: (message = "The server had an error while processing your request.", status = 500): FakeReply => ({
    kind: "error",
    status,
    message,
    type: "server_error",
    code: null,
  }),
  badRequest: (message: string, code: string | null = null): FakeReply => ({
    kind: "error",
    status: 400,
    message,
    type: "invalid_request_error",
    code,
  }),
  raw: (status: number, body: string): FakeReply => ({ kind: "raw", status, body }),
  hang: (): FakeReply => ({ kind: "hang" }),
  disconnect: (): FakeReply => ({ kind: "disconnect" }),
  /** The same reply after `delayMs` (aborted early if the client disconnects). */
  delayed: (delayMs: number, inner: FakeReply): FakeReply =>
    inner.kind === "hang" || inner.kind === "disconnect" ? inner : { ...inner, delayMs },
};

export interface FakeOpenAI {
  /** e.g. `http://127.0.0.1:41234/v1`: pass as the SDK's `baseURL`. */
  readonly baseURL: string;
  /** Every request received, in order (also those answered with errors or abandoned). */
  readonly requests: RecordedRequest[];
  /** The chat-completions requests only, with their bodies. */
  chatRequests(): RecordedRequest[];
  /** Replaces the handler used once the queue is empty. */
  setHandler(handler: FakeHandler): void;
  /** Replies used first, one per request, in order (e.g. a 429 then a success). */
  enqueue(...replies: FakeReply[]): void;
  close(): Promise<void>;
}

export interface FakeOpenAIOptions {
  readonly handler?: FakeHandler;
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  const queue: FakeReply[] = [];
  let handler: FakeHandler = options.handler ?? ((request) => reply.text(defaultSummary(request.body)));
  let chatIndex = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody(`fake server failure: ${String(error)}`, "server_error", null));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      path: (req.url ?? "/").split("?")[0] ?? "/",
      headers: req.headers,
      body: parseJson(raw),
      disconnected: false,
    };
    requests.push(recorded);
    res.on("close", () => {
      if (!res.writableFinished) recorded.disconnected = true;
    });

    if (recorded.method !== "POST" || recorded.path !== "/v1/chat/completions") {
      sendJson(res, 404, errorBody(`Unknown request URL: ${recorded.method} ${recorded.path}`, "invalid_request_error", "unknown_url"));
      return;
    }
    const scripted = queue.shift() ?? (await handler(recorded, chatIndex));
    chatIndex++;
    await send(scripted, recorded, res);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests: () => requests.filter((r) => r.path === "/v1/chat/completions"),
    setHandler: (next) => {
      handler = next;
    },
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * One fake server for the tests of the enclosing suite (the file, or the `describe` it is called
 * in): started in `beforeAll`, closed in `afterAll`; see useSuiteResource.
 *
 *   const fake = useFakeOpenAI();
 *   it("…", async () => { … fake.baseURL … expect(fake.chatRequests()).toHaveLength(1); });
 */
export function useFakeOpenAI(options: FakeOpenAIOptions = {}): FakeOpenAI {
  return useSuiteResource(() => startFakeOpenAI(options), (fake) => fake.close(), "the suite's fake OpenAI server");
}

async function send(scripted: FakeReply, request: RecordedRequest, res: ServerResponse): Promise<void> {
  switch (scripted.kind) {
    case "hang":
      await untilClosed(res);
      return;
    case "disconnect":
      res.socket?.destroy();
      return;
    case "raw":
      if (!(await wait(scripted.delayMs ?? 0, res))) return;
      res.writeHead(scripted.status, { "content-type": "application/json" }).end(scripted.body);
      return;
    case "error":
      if (!(await wait(scripted.delayMs ?? 0, res))) return;
      sendJson(
        res,
        scripted.status,
        errorBody(scripted.message, scripted.type ?? "invalid_request_error", scripted.code ?? null),
        scripted.headers,
      );
      return;
    case "text": {
      if (!(await wait(scripted.delayMs ?? 0, res))) return;
      const usage = usageFor(request.body, scripted.text, scripted.usage);
      const finishReason = scripted.finishReason ?? "stop";
      if (request.body?.stream === true) streamCompletion(res, request.body, scripted.text, finishReason, usage);
      else sendJson(res, 200, completion(request.body, scripted.text, finishReason, usage));
      return;
    }
    case "toolCalls": {
      if (!(await wait(scripted.delayMs ?? 0, res))) return;
      const calls = scripted.calls.map(sentToolCall);
      const text = scripted.text ?? "";
      const outputText = text + calls.map((call) => call.function.name + call.function.arguments).join("");
      const usage = usageFor(request.body, outputText, scripted.usage);
      if (request.body?.stream === true) streamToolCalls(res, request.body, text, calls, usage);
      else sendJson(res, 200, toolCallCompletion(request.body, text, calls, usage));
      return;
    }
  }
}

// ---- response shapes -------------------------------------------------------------------------

let completionCounter = 0;

function completion(body: FakeChatRequestBody | undefined, text: string, finishReason: string, usage: FakeUsage): object {
  return {
    id: `chatcmpl-fake-${++completionCounter}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body?.model ?? "fake-model",
    choices: [{ index: 0, message: { role: "assistant", content: text, refusal: null }, finish_reason: finishReason, logprobs: null }],
    usage,
  };
}

/** Server-sent events as OpenAI streams them: role chunk, content chunks, finish, usage, [DONE]. */
function streamCompletion(res: ServerResponse, body: FakeChatRequestBody, text: string, finishReason: string, usage: FakeUsage): void {
  const id = `chatcmpl-fake-${++completionCounter}`;
  const base = { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: body.model ?? "fake-model" };
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const event = (data: object): void => {
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  };
  event({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
  for (const piece of text.match(/[\s\S]{1,16}/g) ?? []) {
    event({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
  }
  event({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finishReason }] });
  if (body.stream_options?.include_usage) event({ ...base, choices: [], usage });
  res.end("data: [DONE]\n\n");
}

let toolCallCounter = 0;

function sentToolCall(call: FakeToolCall): FakeSentToolCall {
  return {
    id: call.id ?? `call_fake_${++toolCallCounter}`,
    type: "function",
    function: { name: call.name, arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments) },
  };
}

function toolCallCompletion(body: FakeChatRequestBody | undefined, text: string, calls: FakeSentToolCall[], usage: FakeUsage): object {
  return {
    id: `chatcmpl-fake-${++completionCounter}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body?.model ?? "fake-model",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: text.length > 0 ? text : null, refusal: null, tool_calls: calls },
        finish_reason: "tool_calls",
        logprobs: null,
      },
    ],
    usage,
  };
}

/** Tool calls streamed as OpenAI does: each call's id and name first, then its arguments in pieces. */
function streamToolCalls(res: ServerResponse, body: FakeChatRequestBody, text: string, calls: FakeSentToolCall[], usage: FakeUsage): void {
  const id = `chatcmpl-fake-${++completionCounter}`;
  const base = { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: body.model ?? "fake-model" };
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const event = (data: object): void => {
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  };
  const delta = (value: object): void => event({ ...base, choices: [{ index: 0, delta: value, finish_reason: null }] });
  delta({ role: "assistant", content: text.length > 0 ? text : null });
  calls.forEach((call, index) => {
    delta({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] });
    for (const piece of call.function.arguments.match(/[\s\S]{1,16}/g) ?? []) {
      delta({ tool_calls: [{ index, function: { arguments: piece } }] });
    }
  });
  event({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] });
  if (body.stream_options?.include_usage) event({ ...base, choices: [], usage });
  res.end("data: [DONE]\n\n");
}

function errorBody(message: string, type: string, code: string | null): object {
  return { error: { message, type, param: null, code } };
}

function usageFor(body: FakeChatRequestBody | undefined, text: string, override: Partial<FakeUsage> | undefined): FakeUsage {
  const promptChars = (body?.messages ?? []).reduce((sum, m) => sum + (typeof m.content === "string" ? m.content.length : 0), 0);
  const prompt_tokens = override?.prompt_tokens ?? Math.ceil(promptChars / 4);
  const completion_tokens = override?.completion_tokens ?? Math.ceil(text.length / 4);
  return { prompt_tokens, completion_tokens, total_tokens: override?.total_tokens ?? prompt_tokens + completion_tokens };
}

/**
 * The default answer: a summary in the structured format whose Goal echoes the first user line of
 * the conversation in the prompt, so a test can tell that the model saw (and produced) it.
 */
export function defaultSummary(body: FakeChatRequestBody | undefined): string {
  const prompt = [...(body?.messages ?? [])].reverse().find((m) => m.role === "user")?.content;
  const promptText = typeof prompt === "string" ? prompt : "";
  const userLine = /\[User\]:\s*(.+)/.exec(promptText)?.[1] ?? promptText.split("\n").find((l) => l.trim().length > 0) ?? "(empty prompt)";
  return [
    "## Goal",
    `Fake summary of: ${userLine.trim().slice(0, 200)}`,
    "",
    "## Constraints & Preferences",
    "- (none)",
    "",
    "## Progress",
    "### Done",
    `- [x] Read ${promptText.length} characters of conversation`,
    "",
    "### In Progress",
    "- [ ] (none)",
    "",
    "### Blocked",
    "- (none)",
    "",
    "## Key Decisions",
    "- **Fake model**: deterministic reply for tests",
    "",
    "## Next Steps",
    "1. Continue the work",
    "",
    "## Critical Context",
    `- model: ${body?.model ?? "unknown"}`,
  ].join("\n");
}

// ---- plumbing --------------------------------------------------------------------------------

function sendJson(res: ServerResponse, status: number, body: object, headers: Readonly<Record<string, string>> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    // A client that gives up mid-body never sends "end"; settle with what arrived.
    req.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseJson(raw: string): FakeChatRequestBody | undefined {
  if (raw.length === 0) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as FakeChatRequestBody) : undefined;
  } catch {
    return undefined;
  }
}

/** Resolves true after `ms`, or false as soon as the client disconnects (nothing left to answer). */
function wait(ms: number, res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off("close", onClose);
      resolve(true);
    }, ms);
    res.once("close", onClose);
  });
}

function untilClosed(res: ServerResponse): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => res.once("close", () => resolve()));
}
