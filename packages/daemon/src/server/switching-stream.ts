/**
 * A writable stream that forwards to one stream, then from a chosen point to another
 * (protocol-output.ts: the protocol moves from fd 1 to its own descriptor while being served).
 */
import { Writable } from "node:stream";

/**
 * Writes pass straight through (strings stay strings, the target batches and flushes them as it
 * would unwrapped); the stream waits only when the target asks it to (`drain`), and an empty
 * write's callback is the target's (run once everything written before it has been written). The switch travels
 * through the stream as a write of its own, so it happens between two writes: once the first
 * stream has written everything it was given (for a socket: handed to the OS), and before
 * anything written after it, which goes to the second. The current target's errors and close are
 * this stream's.
 */
export class SwitchingStream extends Writable {
  private static readonly SWITCH = Buffer.alloc(0);
  private switchTo: (() => Writable | undefined) | undefined;
  private detach: () => void = () => undefined;

  constructor(private target: Writable) {
    super({ decodeStrings: false });
    this.attach(target);
  }

  private attach(target: Writable): void {
    const onError = (error: Error): void => void this.destroy(error);
    const onClose = (): void => void this.destroy();
    target.on("error", onError);
    target.on("close", onClose);
    this.detach = () => {
      target.off("error", onError);
      target.off("close", onClose);
      // A target left behind writes nothing more; an error it still reports must not go unhandled.
      target.on("error", () => undefined);
    };
  }

  override _write(chunk: Buffer | string, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (chunk.length === 0 && chunk !== SwitchingStream.SWITCH) {
      // "Everything written so far is out" (serve-stdio.ts writes "" to learn that): the target's answer.
      this.target.write(chunk, encoding, callback);
      return;
    }
    if (chunk !== SwitchingStream.SWITCH) {
      if (this.target.write(chunk, encoding)) callback();
      else this.target.once("drain", () => callback());
      return;
    }
    // An empty write's callback runs once everything written before it has been written.
    this.target.write("", (error) => {
      if (error) return callback(error);
      try {
        const next = this.switchTo?.();
        if (next !== undefined) {
          this.detach();
          this.target = next;
          this.attach(next);
        }
        callback();
      } catch (switchError) {
        callback(switchError as Error);
      }
    });
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.target.end(callback);
  }

  /** Resolves once `makeNext()` (run between two writes) has returned the stream writes go to from then on. */
  switchBetweenWrites(makeNext: () => Writable | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      this.switchTo = () => {
        this.switchTo = undefined;
        return makeNext();
      };
      this.write(SwitchingStream.SWITCH, (error) => (error ? reject(error) : resolve()));
    });
  }
}
