/**
 * `session/watch`: tells the clients that asked which sessions were created, written or deleted,
 * by anyone using the same store: this daemon's clients, or other processes (an agent's own
 * daemon, a CLI command, Claude Code's hook). Another process's commit reaches this daemon through
 * nothing but the database, so the store is polled, cheaply: the engine's change stamp first
 * (SessionStore.sessionVersions), the sessions table only after something committed, and only
 * while someone watches.
 */
import { log } from "../log.js";

/** What changed between two polls. */
export interface SessionChanges {
  /** Created or written (appended to, renamed, leaf moved), newest first when the caller sorts them. */
  changed: string[];
  deleted: string[];
}

export interface SessionWatchSource {
  /** See SessionStore.sessionVersions. */
  sessionVersions(since?: string): { stamp: string | undefined; versions: Map<string, string> } | undefined;
}

export interface SessionWatchOptions {
  /** Between two polls. */
  intervalMs?: number;
}

/** About once a second: what a person looking at a list expects, at no measurable cost while nothing changes. */
export const SESSION_WATCH_INTERVAL_MS = 1000;

export class SessionWatch {
  private readonly listeners = new Set<(changes: SessionChanges) => void>();
  private timer: NodeJS.Timeout | undefined;
  private stamp: string | undefined;
  private versions = new Map<string, string>();
  private readonly intervalMs: number;

  constructor(
    private readonly source: SessionWatchSource,
    options: SessionWatchOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? SESSION_WATCH_INTERVAL_MS;
  }

  /** The first listener starts the polling (from the store as it is now); the last one leaving stops it. */
  subscribe(listener: (changes: SessionChanges) => void): { dispose(): void } {
    if (this.listeners.size === 0) this.start();
    this.listeners.add(listener);
    return {
      dispose: () => {
        if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
        this.stop();
      },
    };
  }

  get watching(): boolean {
    return this.timer !== undefined;
  }

  /** One poll: what changed since the last one (also called by the timer). */
  poll(): SessionChanges | undefined {
    const read = this.source.sessionVersions(this.stamp);
    if (read === undefined) return undefined;
    this.stamp = read.stamp;
    const changes: SessionChanges = { changed: [], deleted: [] };
    for (const [id, version] of read.versions) if (this.versions.get(id) !== version) changes.changed.push(id);
    for (const id of this.versions.keys()) if (!read.versions.has(id)) changes.deleted.push(id);
    this.versions = read.versions;
    return changes.changed.length > 0 || changes.deleted.length > 0 ? changes : undefined;
  }

  dispose(): void {
    this.listeners.clear();
    this.stop();
  }

  private start(): void {
    const first = this.source.sessionVersions();
    this.stamp = first?.stamp;
    this.versions = first?.versions ?? new Map();
    // Unref'd: watching never keeps a daemon alive that has nothing else to do.
    this.timer = setInterval(() => this.tick(), this.intervalMs).unref();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.versions = new Map();
    this.stamp = undefined;
  }

  private tick(): void {
    let changes: SessionChanges | undefined;
    try {
      changes = this.poll();
    } catch (error) {
      // The store is unavailable for a moment (a PostgreSQL connection lost): the next poll tries again.
      log("debug", `session watch: could not read the sessions (${(error as Error).message})`);
      return;
    }
    if (changes === undefined) return;
    for (const listener of [...this.listeners]) listener(changes);
  }
}
