/**
 * Backpressure of one connection: how many bytes of replies and notifications have been handed to
 * the stream but not yet to the OS (the client is not reading them). Past `limit` the frame reader
 * of the same connection stops reading the client's messages, and starts again once the queue has
 * drained below half of it: a client that sends requests without reading the replies holds at
 * most about `limit` bytes of the daemon's memory instead of every reply it asked for.
 */

/** The daemon's default `limits.maxQueuedOutputBytes`. */
export const DEFAULT_MAX_QUEUED_OUTPUT_BYTES = 64 * 1024 * 1024;

export class OutputFlow {
  private queued = 0;
  private readonly drainWaiters = new Set<() => void>();

  /**
   * `limit` is looked up at each write (a setting that may change while the daemon runs).
   * `onStall` hears when reading the client's requests stops (the queue went over the limit) and
   * starts again (it drained below half): the daemon logs both, so a stalled client can be seen.
   */
  constructor(
    private readonly limit: () => number,
    readonly onStall: (stalled: boolean, queuedBytes: number) => void = () => undefined,
  ) {}

  /** Bytes written to the stream and not yet flushed to the OS. */
  get queuedBytes(): number {
    return this.queued;
  }

  /** Over the limit: read no more of the client's messages. */
  isOver(): boolean {
    return this.queued >= this.limit();
  }

  /** Past half the limit: notifications that only report progress are coalesced (server.ts). */
  isCongested(): boolean {
    return this.queued >= this.limit() / 2;
  }

  added(bytes: number): void {
    this.queued += bytes;
  }

  flushed(bytes: number): void {
    this.queued -= bytes;
    if (this.drainWaiters.size === 0 || this.queued >= this.limit() / 2) return;
    const waiters = [...this.drainWaiters];
    this.drainWaiters.clear();
    for (const resolve of waiters) resolve();
  }

  /** Calls `callback` once the queue is below half the limit (at once if it is). */
  whenBelowHalf(callback: () => void): void {
    if (this.queued < this.limit() / 2) callback();
    else this.drainWaiters.add(callback);
  }
}

/** Requests handed to the connection and not answered yet, at most; more wait in the reader (RequestGate). */
export const MAX_REQUESTS_IN_FLIGHT = 8;
/** Bytes of requests waiting in the reader past which the reader stops reading the stream. */
const MAX_HELD_BYTES = 1024 * 1024;

interface HeldRequest {
  id: string | number;
  message: unknown;
  bytes: number;
}

/**
 * Between the frame reader and the MessageConnection of a serving end: a request is handed on
 * while fewer than MAX_REQUESTS_IN_FLIGHT of the connection's requests are unanswered and the
 * output is not stalled (over its OutputFlow limit, until it drains below half). Otherwise it
 * waits here, in order; responses and notifications always go on at once (a request in flight may
 * be waiting for the client's response to one of the daemon's own requests, `model/complete`).
 * Once more than MAX_HELD_BYTES of requests wait, the stream is paused. The in-flight bound
 * matters because requests arrive many to a chunk and are all handed on before the first reply is
 * written: without it, a burst of requests for large replies would build every reply at once.
 */
export class RequestGate {
  private readonly held: HeldRequest[] = [];
  private heldBytes = 0;
  private inFlight = 0;
  private stalled = false;
  private pumpScheduled = false;
  private deliver: ((message: unknown) => void) | undefined;

  constructor(
    private readonly flow: OutputFlow,
    /** Pauses (true) or resumes (false) reading the stream. */
    private readonly pauseInput: (paused: boolean) => void,
  ) {}

  /** Where admitted messages go (the MessageConnection's callback). */
  listen(deliver: (message: unknown) => void): void {
    this.deliver = deliver;
  }

  /** A request (it has an id) read from the stream, `bytes` long. */
  request(id: string | number, message: unknown, bytes: number): void {
    if (this.held.length === 0 && this.canHandOn()) {
      this.handOn(message);
      return;
    }
    this.held.push({ id, message, bytes });
    this.heldBytes += bytes;
    if (this.heldBytes >= MAX_HELD_BYTES) this.pauseInput(true);
  }

  /**
   * A waiting request the client cancelled: taken out, to be answered as cancelled by the caller.
   * False when it is not waiting here (handed on already, or unknown).
   */
  cancelHeld(id: string | number): boolean {
    const index = this.held.findIndex((held) => String(held.id) === String(id));
    if (index < 0) return false;
    const [removed] = this.held.splice(index, 1);
    this.heldBytes -= removed!.bytes;
    return true;
  }

  /** A reply to one of the requests handed on was written. */
  answered(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.schedulePump();
  }

  /** Drops what waits (the stream closed). */
  clear(): void {
    this.held.length = 0;
    this.heldBytes = 0;
  }

  private canHandOn(): boolean {
    if (!this.stalled && this.flow.isOver()) {
      this.stalled = true;
      this.flow.onStall(true, this.flow.queuedBytes);
      this.flow.whenBelowHalf(() => {
        this.stalled = false;
        this.flow.onStall(false, this.flow.queuedBytes);
        this.schedulePump();
      });
    }
    return !this.stalled && this.inFlight < MAX_REQUESTS_IN_FLIGHT;
  }

  private handOn(message: unknown): void {
    this.inFlight++;
    this.deliver?.(message);
  }

  private schedulePump(): void {
    if (this.pumpScheduled || this.held.length === 0) return;
    this.pumpScheduled = true;
    // Not from inside the write that answered a request: the next request starts on a fresh stack.
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.held.length > 0 && this.canHandOn()) {
      const next = this.held.shift()!;
      this.heldBytes -= next.bytes;
      this.handOn(next.message);
    }
    if (this.heldBytes < MAX_HELD_BYTES) this.pauseInput(false);
  }
}
