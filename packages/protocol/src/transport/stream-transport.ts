/**
 * JSON-RPC over a byte stream with LSP's `Content-Length` framing, for both ends (client and
 * daemon). vscode-jsonrpc's `MessageConnection` keeps doing the protocol (ids, cancellation,
 * progress); only reading and writing the frames is done here, because its stream reader and
 * writer copy every large message through extra buffers:
 *
 * - writing, a message becomes small UTF-8 strings written one after another (see json-pieces.ts)
 *   instead of one flattened string plus one Buffer of the whole message;
 * - reading, each chunk is decoded as it arrives and the message text is joined once for
 *   `JSON.parse`, instead of copying the chunks into one Buffer and decoding that.
 *
 * Large messages cross stdio faster so, on a machine where fresh memory pages are expensive
 * (bench/results/daemon.md); small messages are unaffected.
 *
 * A frame that cannot be read (see FramingError: a bad or missing Content-Length, bare-LF header
 * lines, a header over 8 KB, a body over `maxMessageBytes`) is reported once and nothing after it
 * is read: its owner closes the connection. On the serving end, messages that are not JSON-RPC
 * requests are answered here (message-guard.ts).
 */
import { StringDecoder } from "node:string_decoder";
import type { Readable, Writable } from "node:stream";
import {
  AbstractMessageReader,
  AbstractMessageWriter,
  createMessageConnection,
  Disposable,
  type DataCallback,
  type Message,
  type MessageConnection,
  type MessageReader,
  type MessageWriter,
} from "vscode-jsonrpc/node";
import { jsonPieces } from "./json-pieces.js";
import { FramingError, InvalidMessageError, MessageGuard } from "./message-guard.js";
import { type OutputFlow, RequestGate } from "./output-flow.js";

const HEADER_END = "\r\n\r\n";
/** A header block longer than this is not LSP framing: the stream is reported broken. */
const MAX_HEADER_CHARS = 8 * 1024;
/** Pieces are gathered into writes of about this many characters. */
const WRITE_CHARS = 32 * 1024;
/** The daemon's default `limits.maxMessageBytes`: the largest message body it reads. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export interface StreamFrameReaderOptions {
  /**
   * The largest message body accepted, in bytes, looked up at each header: a larger Content-Length
   * is a FramingError before any of the body is buffered. Default: no limit (a client reading its
   * own daemon's replies, which may be a whole exported session); the daemon sets one.
   */
  maxMessageBytes?: number | (() => number);
  /** The receiving end of a server: answers messages that are not JSON-RPC requests itself (see message-guard.ts). */
  guard?: MessageGuard;
  /** The serving end's backpressure: requests wait while the output is stalled or too many are in flight (output-flow.ts). */
  flow?: OutputFlow;
}

export class StreamFrameReader extends AbstractMessageReader implements MessageReader {
  private header = "";
  /** Bytes of the body still to come; -1 while reading a header. */
  private remaining = -1;
  private body: string[] = [];
  private bodyBytes = 0;
  private readonly decoder = new StringDecoder("utf8");
  private broken = false;
  private paused = false;
  private readonly gate: RequestGate | undefined;

  constructor(
    private readonly readable: Readable,
    private readonly options: StreamFrameReaderOptions = {},
  ) {
    super();
    if (options.flow !== undefined) {
      this.gate = new RequestGate(options.flow, (paused) => this.pauseInput(paused));
      if (options.guard) options.guard.onAnswered = () => this.gate?.answered();
    }
  }

  private pauseInput(paused: boolean): void {
    if (paused === this.paused) return;
    this.paused = paused;
    if (paused) this.readable.pause();
    else this.readable.resume();
  }

  /** Bytes of a message begun but not complete (a half-sent frame), held until it completes or the stream ends. */
  bufferedBytes(): number {
    return this.header.length + this.bodyBytes;
  }

  listen(callback: DataCallback): Disposable {
    this.gate?.listen((message) => callback(message as Message));
    const onData = (chunk: Buffer | string) => {
      if (this.broken) return;
      try {
        this.read(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk, callback);
      } catch (error) {
        // A frame that cannot be read leaves the stream unusable: report once, read no further,
        // and let go of what a half-read frame holds. The owner closes the connection.
        this.broken = true;
        this.release();
        const framing = error instanceof FramingError ? error : new FramingError("invalid_frame", (error as Error).message);
        this.options.guard?.framingError(framing);
        this.fireError(framing);
      }
    };
    const onError = (error: Error) => this.fireError(error);
    const onClose = () => {
      // The client left mid-frame: what it sent of it is garbage now.
      this.release();
      this.fireClose();
    };
    this.readable.on("data", onData);
    this.readable.on("error", onError);
    this.readable.on("close", onClose);
    return Disposable.create(() => {
      this.readable.off("data", onData);
      this.readable.off("error", onError);
      this.readable.off("close", onClose);
      this.release();
    });
  }

  private release(): void {
    this.gate?.clear();
    this.header = "";
    this.body = [];
    this.bodyBytes = 0;
    this.decoder.end();
  }

  private read(chunk: Buffer, deliver: DataCallback): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining < 0) {
        offset = this.readHeader(chunk, offset);
        if (this.remaining < 0) return;
      }
      const take = Math.min(this.remaining, chunk.length - offset);
      if (take > 0) {
        this.body.push(this.decoder.write(chunk.subarray(offset, offset + take)));
        this.bodyBytes += take;
      }
      offset += take;
      this.remaining -= take;
      if (this.remaining === 0) {
        const text = this.body.join("") + this.decoder.end();
        this.body = [];
        this.bodyBytes = 0;
        this.remaining = -1;
        this.deliver(text, deliver);
      }
    }
  }

  private deliver(text: string, deliver: DataCallback): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      // The framing is intact: answer (or report) this message and go on with the next one.
      // Bounded: neither the parser's message nor the text may echo a megabyte message back.
      const more = text.length > 200 ? `… (${text.length} characters)` : "";
      const detail = `${(error as Error).message.slice(0, 200)}: ${text.slice(0, 200)}${more}`;
      this.fireError(this.options.guard?.notJson(detail) ?? new InvalidMessageError("parse_error", `a message is not JSON (${detail})`));
      return;
    }
    const admitted = this.options.guard ? this.options.guard.admit(value) : (value as Message);
    if (admitted instanceof InvalidMessageError) this.fireError(admitted);
    else if (this.gate !== undefined) this.throughGate(admitted, text.length, deliver);
    else deliver(admitted);
  }

  private throughGate(message: Message, bytes: number, deliver: DataCallback): void {
    const { id, method, params } = message as { id?: unknown; method?: unknown; params?: { id?: unknown } };
    if (typeof method === "string" && (typeof id === "string" || typeof id === "number")) {
      this.gate!.request(id, message, bytes);
      return;
    }
    const cancelId = method === "$/cancelRequest" ? params?.id : undefined;
    if ((typeof cancelId === "string" || typeof cancelId === "number") && this.gate!.cancelHeld(cancelId)) {
      this.options.guard?.cancelled(cancelId);
      return;
    }
    deliver(message);
  }

  /** Consumes header bytes from `offset`; sets `remaining` once the header block is complete. */
  private readHeader(chunk: Buffer, offset: number): number {
    // The usual case, the whole header in this chunk: decode just the header, not the 8 KB after it
    // (a chunk of many small messages would otherwise decode the whole chunk per message).
    if (this.header.length === 0) {
      const end = chunk.indexOf(HEADER_END, offset, "latin1");
      if (end >= 0 && end - offset <= MAX_HEADER_CHARS) {
        this.remaining = this.bodyLength(chunk.toString("latin1", offset, end));
        return end + HEADER_END.length;
      }
    }
    // Headers are ASCII; latin1 maps bytes to characters one to one, so offsets stay byte offsets.
    const known = this.header.length;
    // A little past the limit, so a header that is too long is known from this chunk alone.
    this.header += chunk.toString("latin1", offset, Math.min(chunk.length, offset + MAX_HEADER_CHARS + HEADER_END.length));
    const end = this.header.indexOf(HEADER_END);
    if (end < 0) {
      // Header lines end with CRLF: a bare LF means the sender frames differently, and waiting
      // for a CRLFCRLF that never comes would leave its request unanswered.
      if (BARE_LF.test(this.header))
        throw new FramingError(
          "invalid_frame",
          `header lines must end with CRLF, got a bare LF: ${JSON.stringify(this.header.slice(0, 100))}`,
        );
      if (this.header.length > MAX_HEADER_CHARS)
        throw new FramingError("invalid_frame", "no end of the message header in 8 KB: not Content-Length framing");
      return chunk.length;
    }
    const consumed = end + HEADER_END.length - known;
    const header = this.header.slice(0, end);
    this.header = "";
    this.remaining = this.bodyLength(header);
    return offset + consumed;
  }

  private bodyLength(header: string): number {
    const length = contentLength(header);
    const limit =
      typeof this.options.maxMessageBytes === "function"
        ? this.options.maxMessageBytes()
        : (this.options.maxMessageBytes ?? Number.POSITIVE_INFINITY);
    if (length > limit) {
      throw new FramingError(
        "message_too_large",
        `message of ${length} bytes refused: the largest accepted is ${limit} bytes (setting limits.maxMessageBytes)`,
      );
    }
    return length;
  }
}

const BARE_LF = /(?:^|[^\r])\n/;

function contentLength(header: string): number {
  if (BARE_LF.test(header))
    throw new FramingError("invalid_frame", `header lines must end with CRLF, got a bare LF: ${JSON.stringify(header.slice(0, 100))}`);
  let found: number | undefined;
  for (const line of header.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    if (line.slice(0, colon).trim().toLowerCase() !== "content-length") continue;
    const value = line.slice(colon + 1).trim();
    if (!/^\d+$/.test(value))
      throw new FramingError("invalid_frame", `Content-Length must be a number of bytes, got "${value.slice(0, 100)}"`);
    const length = Number(value);
    if (found !== undefined && found !== length)
      throw new FramingError("invalid_frame", `two different Content-Length headers (${found} and ${length})`);
    found = length;
  }
  if (found === undefined)
    throw new FramingError("invalid_frame", `the message header has no Content-Length: ${JSON.stringify(header.slice(0, 200))}`);
  return found;
}

export class StreamFrameWriter extends AbstractMessageWriter implements MessageWriter {
  private errorCount = 0;
  /** Told of every message written (the guard ends a request's time in flight with its reply). */
  onWrite: ((message: Message) => void) | undefined;

  constructor(
    private readonly writable: Writable,
    private readonly flow?: OutputFlow,
  ) {
    super();
    writable.on("error", (error: Error) => this.fireError(error));
    writable.on("close", () => this.fireClose());
  }

  write(message: Message): Promise<void> {
    let writes: string[];
    let bytes = 0;
    try {
      writes = gather(jsonPieces(message));
      for (const text of writes) bytes += Buffer.byteLength(text, "utf8");
    } catch (error) {
      this.fireError(error, message, ++this.errorCount);
      return Promise.reject(error);
    }
    this.onWrite?.(message);
    // One synchronous run of writes: frames of concurrent messages never interleave.
    const frameBytes = bytes + 32;
    this.flow?.added(frameBytes);
    return new Promise((resolve, reject) => {
      let flushed = false;
      const done = (error?: Error | null) => {
        if (!flushed) this.flow?.flushed(frameBytes);
        flushed = true;
        if (!error) return resolve();
        this.fireError(error, message, ++this.errorCount);
        reject(error);
      };
      try {
        // The header goes with the first piece: one write (one system call) for a small message.
        const header = `Content-Length: ${bytes}${HEADER_END}`;
        for (let index = 0; index < writes.length; index++) {
          const text = index === 0 ? header + writes[0]! : writes[index]!;
          if (index === writes.length - 1) this.writable.write(text, "utf8", done);
          else this.writable.write(text, "utf8");
        }
      } catch (error) {
        done(error as Error);
      }
    });
  }

  end(): void {
    this.writable.end();
  }
}

/** Small pieces joined into writes of about WRITE_CHARS (a long piece stays one write). */
function gather(pieces: string[]): string[] {
  if (pieces.length === 1) return pieces;
  const writes: string[] = [];
  let batch: string[] = [];
  let chars = 0;
  for (const piece of pieces) {
    if (chars > 0 && chars + piece.length > WRITE_CHARS) {
      writes.push(batch.join(""));
      batch = [];
      chars = 0;
    }
    batch.push(piece);
    chars += piece.length;
  }
  if (batch.length > 0) writes.push(batch.join(""));
  return writes;
}

export interface StreamConnectionOptions {
  /** The largest message accepted from the other end (bytes), looked up at each header; see StreamFrameReaderOptions. */
  maxMessageBytes?: number | (() => number);
  /**
   * The serving end: messages that are not valid JSON-RPC requests, duplicate ids of requests in
   * flight and unreadable frames are answered with JSON-RPC errors here (see message-guard.ts).
   */
  answerInvalidMessages?: boolean;
  /**
   * The serving end's backpressure (output-flow.ts): the bytes of replies and notifications
   * waiting to be written past which the client's requests wait unread. Needs answerInvalidMessages.
   */
  flow?: OutputFlow;
}

/** A JSON-RPC connection over a readable/writable pair (stdio, a socket, an in-memory duplex). */
export function createStreamConnection(readable: Readable, writable: Writable, options: StreamConnectionOptions = {}): MessageConnection {
  const writer = new StreamFrameWriter(writable, options.flow);
  let guard: MessageGuard | undefined;
  if (options.answerInvalidMessages === true) {
    const answer = new MessageGuard((response) => {
      // Best effort: the stream may be closing (that is reported by the writer's own events).
      if (!writable.destroyed && !writable.writableEnded) writer.write(response).catch(() => undefined);
    });
    writer.onWrite = (message) => answer.written(message);
    guard = answer;
  }
  const reader = new StreamFrameReader(readable, {
    ...(options.maxMessageBytes !== undefined ? { maxMessageBytes: options.maxMessageBytes } : {}),
    ...(guard ? { guard } : {}),
    ...(guard && options.flow ? { flow: options.flow } : {}),
  });
  return createMessageConnection(reader, writer);
}
