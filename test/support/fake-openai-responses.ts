/**
 * A local OpenAI Responses API server for tests (`POST /v1/responses`, streamed as server-sent
 * events), the wire API Codex speaks to a custom `model_providers` entry. node:http only, bound to
 * 127.0.0.1 on a random port. Every request is recorded; each one is answered by the next scripted
 * reply: output items (assistant text, reasoning, function calls, custom tool calls) streamed as
 * `response.output_item.done` events, then `response.completed` with a usage report.
 *
 *   const fake = await startFakeResponses();
 *   fake.enqueue([item.functionCall("exec_command", { cmd: "cat notes.md" })], { items: [item.message("Done.")], inputTokens: 9000 });
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One output item of a scripted reply, as the Responses API streams it. */
export type FakeOutputItem =
  | { readonly type: "message"; readonly text: string }
  | { readonly type: "reasoning"; readonly summary: string }
  | { readonly type: "function_call"; readonly name: string; readonly arguments: string; readonly callId: string }
  | { readonly type: "custom_tool_call"; readonly name: string; readonly input: string; readonly callId: string };

/** The request body fields tests look at; everything else is kept too. */
export interface FakeResponsesBody {
  model?: string;
  input?: Array<Record<string, unknown>>;
  tools?: Array<{ type: string; name?: string }>;
  [key: string]: unknown;
}

/** A reply: its output items, and the context size it reports (what makes Codex compact). */
export type FakeResponsesReply = FakeOutputItem[] | { readonly items: FakeOutputItem[]; readonly inputTokens: number };

export interface RecordedResponsesRequest {
  readonly method: string;
  readonly path: string;
  readonly body: FakeResponsesBody | undefined;
}

let nextCallId = 0;

/** Builders for the items above; call ids are fresh unless given. */
export const item = {
  message: (text: string): FakeOutputItem => ({ type: "message", text }),
  reasoning: (summary: string): FakeOutputItem => ({ type: "reasoning", summary }),
  functionCall: (name: string, args: Record<string, unknown>, callId = `call_fake_${++nextCallId}`): FakeOutputItem => ({
    type: "function_call",
    name,
    arguments: JSON.stringify(args),
    callId,
  }),
  customToolCall: (name: string, input: string, callId = `call_fake_${++nextCallId}`): FakeOutputItem => ({
    type: "custom_tool_call",
    name,
    input,
    callId,
  }),
};

export interface FakeResponses {
  /** e.g. `http://127.0.0.1:41234/v1`: a provider's `base_url`. */
  readonly baseURL: string;
  /** Every request received, in order. */
  readonly requests: RecordedResponsesRequest[];
  /** Replies, one per `/v1/responses` request, in order; once empty, a plain "Done." message. */
  enqueue(...replies: FakeResponsesReply[]): void;
  close(): Promise<void>;
}

export async function startFakeResponses(): Promise<FakeResponses> {
  const requests: RecordedResponsesRequest[] = [];
  const queue: FakeResponsesReply[] = [];
  let responseCount = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake server failure: ${String(error)}`, type: "server_error" } });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    let body: FakeResponsesBody | undefined;
    try {
      body = raw.length > 0 ? (JSON.parse(raw) as FakeResponsesBody) : undefined;
    } catch {
      body = undefined;
    }
    requests.push({ method: req.method ?? "GET", path, body });
    if (req.method !== "POST" || path !== "/v1/responses") {
      sendJson(res, 404, { error: { message: `Unknown request URL: ${req.method} ${path}`, type: "invalid_request_error" } });
      return;
    }
    const responseId = `resp_fake_${++responseCount}`;
    const next = queue.shift() ?? [item.message("Done.")];
    const items = Array.isArray(next) ? next : next.items;
    const inputTokens = Array.isArray(next) ? 100 : next.inputTokens;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send("response.created", { response: { id: responseId, status: "in_progress" } });
    items.forEach((scripted, index) => {
      const output = outputItem(scripted, `${responseId}_${index}`);
      send("response.output_item.added", { output_index: index, item: output });
      if (scripted.type === "message") {
        send("response.output_text.delta", { output_index: index, content_index: 0, item_id: output.id, delta: scripted.text });
      }
      send("response.output_item.done", { output_index: index, item: output });
    });
    const usage = { input_tokens: inputTokens, output_tokens: 20, total_tokens: inputTokens + 20 };
    send("response.completed", { response: { id: responseId, status: "completed", usage } });
    res.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function outputItem(scripted: FakeOutputItem, id: string): Record<string, unknown> & { id: string } {
  switch (scripted.type) {
    case "message":
      return {
        type: "message",
        id,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: scripted.text, annotations: [] }],
      };
    case "reasoning":
      return { type: "reasoning", id, summary: [{ type: "summary_text", text: scripted.summary }] };
    case "function_call":
      return { type: "function_call", id, status: "completed", name: scripted.name, arguments: scripted.arguments, call_id: scripted.callId };
    case "custom_tool_call":
      return { type: "custom_tool_call", id, status: "completed", name: scripted.name, input: scripted.input, call_id: scripted.callId };
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
