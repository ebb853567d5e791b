/**
 * A writable stream that forwards to one stream, then from a chosen point to another
 * (protocol-output.ts: the protocol moves from fd 1 to its own descriptor while being served).
 */
import { Writable } from "node:stream";

/**
 * The switch travels through the stream as a write of its own, so it happens between two writes:
 * everything written before it has been written by the first stream (its callbacks have run: for
 * a socket, handed to the OS), everything written after it goes to the second.
 */
export class SwitchingStream extends Writable {
  private static readonly SWITCH = Buffer.alloc(0);
  private switchTo: (() => Writable | undefined) | undefined;

  constructor(private target: Writable) {
    super();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (chunk !== SwitchingStream.SWITCH) {
      this.target.write(chunk, encoding, callback);
      return;
    }
    try {
      const next = this.switchTo?.();
      if (next !== undefined) this.target = next;
      callback();
    } catch (error) {
      callback(error as Error);
    }
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
