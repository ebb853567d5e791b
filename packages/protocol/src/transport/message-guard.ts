/**
 * What the receiving end of a connection does with a message that is not valid JSON-RPC 2.0,
 * before vscode-jsonrpc's MessageConnection sees it. The MessageConnection only logs such a
 * message and answers nothing, so a client that sent one would wait forever; here each gets the
 * error reply JSON-RPC 2.0 prescribes, written directly:
 *
 * - a body that is not JSON: -32700 with `id: null` (`parse_error`);
 * - anything but one request, notification or response object — a batch (arrays are not
 *   supported), `42`, `"hi"`, `null`, a `method` that is not a string, an `id` that is not a
 *   string or a number, `params` that are not an object or array, a missing `"jsonrpc": "2.0"`:
 *   -32600 with the request's id when it has a usable one, else `id: null` (`invalid_request`);
 * - a request whose id is the id of a request of the same connection still in flight (1 and "1"
 *   count as the same, see idKey): -32600 `duplicate_request_id`, and the first request goes on
 *   (its reply is the only other one with that id). Left to vscode-jsonrpc, the second would
 *   silently replace the first in its queue: a write the client thinks was made would be lost.
 *
 * A frame that cannot be read at all (see FramingError) gets a best-effort reply too, and then
 * the connection is closed by its owner.
 */
import type { Message, ResponseMessage } from "vscode-jsonrpc/node";
import { ErrorCodes, TransportErrorCode } from "../errors.js";
import { MAX_ID_CHARS, quoteInput } from "../limits.js";

/** The longest method name looked up; every method of the protocol is far shorter. */
export const MAX_METHOD_CHARS = 256;

/**
 * The byte stream cannot be read any further (a bad or missing Content-Length, a header that
 * does not end, a message over the size limit): the connection must be closed.
 */
export class FramingError extends Error {
  override readonly name = "FramingError";
  constructor(
    readonly code: "invalid_frame" | "message_too_large",
    message: string,
  ) {
    super(message);
  }
}

/** A message that was answered with an error instead of being handed on (the stream stays usable). */
export class InvalidMessageError extends Error {
  override readonly name = "InvalidMessageError";
  constructor(
    readonly code: TransportErrorCode,
    message: string,
  ) {
    super(message);
  }
}

type Id = string | number;

function isId(value: unknown): value is Id {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

/**
 * 1 and "1" are different ids to JSON-RPC, but vscode-jsonrpc queues incoming requests in a map
 * keyed by `String(id)`: a second request with either spelling would replace the first one
 * still queued, which then never runs and is never answered. So they count as the same id here.
 */
function idKey(id: Id): string {
  return String(id);
}

function jsonrpcValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") return quoteInput(value);
  return typeof value === "object" && value !== null ? describe(value) : JSON.stringify(value);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? "an empty array" : "a batch (an array)";
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

export class MessageGuard {
  /** Ids of this connection's requests that have not been answered yet. */
  private readonly inFlight = new Set<string>();
  /** Replies sent from here: they answer no request that is in flight (a duplicate's id is the first one's). */
  private readonly own = new WeakSet<object>();

  /** `reply` writes a response on the connection (not through the MessageConnection). */
  constructor(private readonly reply: (response: ResponseMessage) => void) {}

  /**
   * The message to hand on to the MessageConnection, or an InvalidMessageError when it was
   * answered here instead.
   */
  admit(value: unknown): Message | InvalidMessageError {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      const batch = Array.isArray(value) && value.length > 0 ? ": batches are not supported, send each request in its own message" : "";
      return this.refuse(null, "invalid_request", `invalid request: a message must be one JSON-RPC object, got ${describe(value)}${batch}`);
    }
    const message = value as Record<string, unknown>;
    const id = message.id;
    const usableId = isId(id) ? id : null;
    if (message.jsonrpc !== "2.0") {
      return this.refuse(
        usableId,
        "invalid_request",
        `invalid request: "jsonrpc" must be "2.0", got ${jsonrpcValue(message.jsonrpc)}`,
      );
    }
    if ("method" in message) {
      if (typeof message.method !== "string")
        return this.refuse(usableId, "invalid_request", `invalid request: "method" must be a string, got ${describe(message.method)}`);
      if (id !== undefined && !isId(id))
        return this.refuse(null, "invalid_request", `invalid request: "id" must be a string or a number, got ${describe(id)}`);
      // Echoed in the reply, an id of megabytes would make the reply as large: it gets none (id null).
      if (typeof id === "string" && id.length > MAX_ID_CHARS) {
        return this.refuse(null, "invalid_request", `invalid request: "id" ${quoteInput(id)} is longer than ${MAX_ID_CHARS} characters`);
      }
      if (message.method.length > MAX_METHOD_CHARS) {
        const text = `unknown method ${quoteInput(message.method)}: method names are at most ${MAX_METHOD_CHARS} characters`;
        // A notification gets no reply, whatever its method.
        if (id === undefined) return new InvalidMessageError("method_not_found", text);
        return this.refuse(usableId, "method_not_found", text);
      }
      if (message.params !== undefined && (typeof message.params !== "object" || message.params === null)) {
        return this.refuse(
          usableId,
          "invalid_request",
          `invalid request: "params" must be an object or an array, got ${describe(message.params)}`,
        );
      }
      if (usableId !== null) {
        const key = idKey(usableId);
        if (this.inFlight.has(key)) {
          return this.refuse(
            usableId,
            "duplicate_request_id",
            `request id ${JSON.stringify(usableId)} is already used by a request in flight on this connection; give each request its own id`,
          );
        }
        this.inFlight.add(key);
      }
      return message as unknown as Message;
    }
    // A response to one of the daemon's own requests.
    if ((id === null || isId(id)) && ("result" in message || "error" in message)) return message as unknown as Message;
    return this.refuse(usableId, "invalid_request", 'invalid request: neither a request ("method") nor a response ("result" or "error")');
  }

  /** Told when a reply ends the time in flight of a request handed on (RequestGate). */
  onAnswered: (() => void) | undefined;

  /** Every message written on the connection passes here: a response ends its request's time in flight. */
  written(message: Message): void {
    if (this.own.has(message)) return;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (method === undefined && isId(id) && this.inFlight.delete(idKey(id))) this.onAnswered?.();
  }

  /** A request cancelled before it was handed on (it waited in the RequestGate): answered as cancelled here. */
  cancelled(id: Id): void {
    this.inFlight.delete(idKey(id));
    const response: ResponseMessage = {
      jsonrpc: "2.0",
      id,
      error: { code: ErrorCodes.RequestCancelled, message: "request cancelled before it started", data: { code: "cancelled" } },
    };
    this.own.add(response);
    this.reply(response);
  }

  notJson(detail: string): InvalidMessageError {
    return this.refuse(null, "parse_error", `parse error: the message is not JSON (${detail})`);
  }

  /** The last word on a connection whose frames cannot be read: said if the stream still takes it. */
  framingError(error: FramingError): void {
    this.send(null, error.code, error.message);
  }

  private refuse(id: Id | null, code: TransportErrorCode, text: string): InvalidMessageError {
    this.send(id, code, text);
    return new InvalidMessageError(code, text);
  }

  private send(id: Id | null, code: TransportErrorCode, text: string): void {
    const response: ResponseMessage = { jsonrpc: "2.0", id, error: { code: TransportErrorCode[code], message: text, data: { code } } };
    this.own.add(response);
    this.reply(response);
  }
}
