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
 * A context of 500 KB crossed stdio in ~11 ms before and ~7 ms after, on a machine where
 * fresh memory pages are expensive; small messages are unaffected.
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

const HEADER_END = "\r\n\r\n";
/** A header block longer than this is not LSP framing: the stream is reported broken. */
const MAX_HEADER_CHARS = 8 * 1024;
/** Pieces are gathered into writes of about this many characters. */
const WRITE_CHARS = 32 * 1024;

export class StreamFrameReader extends AbstractMessageReader implements MessageReader {
  private header = "";
  /** Bytes of the body still to come; -1 while reading a header. */
  private remaining = -1;
  private body: string[] = [];
  private readonly decoder = new StringDecoder("utf8");
  private broken = false;

  constructor(private readonly readable: Readable) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    const onData = (chunk: Buffer | string) => {
      if (this.broken) return;
      try {
        this.read(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk, callback);
      } catch (error) {
        // A frame that cannot be read leaves the stream unusable: report once, read no further.
        this.broken = true;
        this.fireError(error);
      }
    };
    const onError = (error: Error) => this.fireError(error);
    const onClose = () => this.fireClose();
    this.readable.on("data", onData);
    this.readable.on("error", onError);
    this.readable.on("close", onClose);
    return Disposable.create(() => {
      this.readable.off("data", onData);
      this.readable.off("error", onError);
      this.readable.off("close", onClose);
    });
  }

  private read(chunk: Buffer, deliver: DataCallback): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining < 0) {
        offset = this.readHeader(chunk, offset);
        if (this.remaining < 0) return;
      }
      const take = Math.min(this.remaining, chunk.length - offset);
      if (take > 0) this.body.push(this.decoder.write(chunk.subarray(offset, offset + take)));
      offset += take;
      this.remaining -= take;
      if (this.remaining === 0) {
        const text = this.body.join("") + this.decoder.end();
        this.body = [];
        this.remaining = -1;
        let message: Message;
        try {
          message = JSON.parse(text) as Message;
        } catch (error) {
          // The framing is intact: report this message and go on with the next one.
          this.fireError(new Error(`a message is not JSON (${(error as Error).message}): ${text.slice(0, 200)}`));
          continue;
        }
        deliver(message);
      }
    }
  }

  /** Consumes header bytes from `offset`; sets `remaining` once the header block is complete. */
  private readHeader(chunk: Buffer, offset: number): number {
    // The usual case, the whole header in this chunk: decode just the header, not the 8 KB after it
    // (a chunk of many small messages would otherwise decode ~8 KB per message).
    if (this.header.length === 0) {
      const end = chunk.indexOf(HEADER_END, offset, "latin1");
      if (end >= 0 && end - offset <= MAX_HEADER_CHARS) {
        this.remaining = contentLength(chunk.toString("latin1", offset, end));
        return end + HEADER_END.length;
      }
    }
    // Headers are ASCII; latin1 maps bytes to characters one to one, so offsets stay byte offsets.
    const known = this.header.length;
    this.header += chunk.toString("latin1", offset, Math.min(chunk.length, offset + MAX_HEADER_CHARS));
    const end = this.header.indexOf(HEADER_END);
    if (end < 0) {
      if (this.header.length > MAX_HEADER_CHARS) throw new Error("no end of the message header in 8 KB: not Content-Length framing");
      return chunk.length;
    }
    const consumed = end + HEADER_END.length - known;
    this.remaining = contentLength(this.header.slice(0, end));
    this.header = "";
    return offset + consumed;
  }
}

function contentLength(header: string): number {
  for (const line of header.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    if (line.slice(0, colon).trim().toLowerCase() !== "content-length") continue;
    const value = line.slice(colon + 1).trim();
    if (!/^\d+$/.test(value)) throw new Error(`Content-Length must be a number, got "${value}"`);
    return Number(value);
  }
  throw new Error(`the message header has no Content-Length: ${JSON.stringify(header)}`);
}

export class StreamFrameWriter extends AbstractMessageWriter implements MessageWriter {
  private errorCount = 0;

  constructor(private readonly writable: Writable) {
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
    // One synchronous run of writes: frames of concurrent messages never interleave.
    return new Promise((resolve, reject) => {
      const done = (error?: Error | null) => {
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

/** A JSON-RPC connection over a readable/writable pair (stdio, a socket, an in-memory duplex). */
export function createStreamConnection(readable: Readable, writable: Writable): MessageConnection {
  return createMessageConnection(new StreamFrameReader(readable), new StreamFrameWriter(writable));
}
