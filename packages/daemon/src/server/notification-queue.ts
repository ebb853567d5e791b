/**
 * Notifications to a client that is not reading (its connection's output is past half of
 * `limits.maxQueuedOutputBytes`, output-flow.ts) wait here instead of in the stream, bounded:
 * `$/progress` of one token keeps its `begin` and `end` and only the latest report in between;
 * `plugins/didChange` (the whole list each time) only the latest; past MAX_HELD the rest are
 * dropped and counted, and the client is told how many once it reads again.
 */
import type { OutputFlow } from "@base-context/protocol";

/** Notifications held for one stalled client, at most. */
export const MAX_HELD_NOTIFICATIONS = 1000;

interface Held {
  method: string;
  params: unknown;
  /** A `$/progress` report of this token: replaced by the next report of the same token. */
  reportOf?: string | number;
}

export class NotificationQueue {
  private readonly held: Held[] = [];
  private dropped = 0;
  private waiting = false;

  constructor(
    private readonly flow: OutputFlow,
    private readonly send: (method: string, params: unknown) => void,
  ) {}

  notify(method: string, params: unknown): void {
    if (this.held.length === 0 && !this.flow.isCongested()) {
      this.send(method, params);
      return;
    }
    const reportOf = progressReportToken(method, params);
    const replaceable = (held: Held): boolean =>
      reportOf !== undefined ? held.reportOf === reportOf : method === "plugins/didChange" && held.method === method;
    const last = this.findLast(replaceable);
    if (last !== undefined && (reportOf === undefined || last === this.held.length - 1 || this.noneAfterFor(last, reportOf))) {
      this.held[last] = { method, params, ...(reportOf !== undefined ? { reportOf } : {}) };
    } else if (this.held.length >= MAX_HELD_NOTIFICATIONS) {
      this.dropped++;
    } else {
      this.held.push({ method, params, ...(reportOf !== undefined ? { reportOf } : {}) });
    }
    this.waitForDrain();
  }

  /** How many wait (tests, diagnostics). */
  get size(): number {
    return this.held.length;
  }

  private findLast(match: (held: Held) => boolean): number | undefined {
    for (let i = this.held.length - 1; i >= 0; i--) if (match(this.held[i]!)) return i;
    return undefined;
  }

  /** Nothing of the same progress token (a `begin` or `end`) after index `at`. */
  private noneAfterFor(at: number, token: string | number): boolean {
    for (let i = at + 1; i < this.held.length; i++) {
      const held = this.held[i]!;
      if (held.method === "$/progress" && (held.params as { token?: unknown }).token === token) return false;
    }
    return true;
  }

  private waitForDrain(): void {
    if (this.waiting) return;
    this.waiting = true;
    this.flow.whenBelowHalf(() => {
      this.waiting = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.held.length > 0 && !this.flow.isCongested()) {
      const next = this.held.shift()!;
      this.send(next.method, next.params);
    }
    if (this.held.length > 0) {
      this.waitForDrain();
      return;
    }
    if (this.dropped > 0) {
      const message = `${this.dropped} notifications were dropped while this client was not reading its output`;
      this.dropped = 0;
      this.send("log/message", { level: "warn", message });
    }
  }
}

/** The token of a `$/progress` whose value is a `report` (not a `begin` or `end`), else undefined. */
function progressReportToken(method: string, params: unknown): string | number | undefined {
  if (method !== "$/progress") return undefined;
  const { token, value } = params as { token: string | number; value?: { kind?: unknown } };
  return value?.kind === "report" ? token : undefined;
}
