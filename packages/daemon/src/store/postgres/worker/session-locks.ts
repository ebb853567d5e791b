/**
 * Session-level advisory locks in the worker, on one dedicated connection, never pooled nor
 * reconnected. Such a lock lives exactly as long as its connection: this one is opened for the
 * first lock, stays open while any is held, and is not reconnected when it breaks (the locks are
 * gone then; the main thread hears "locks-lost" and decides what that means).
 */
import type pg from "pg";
import type { PgEvent, QueryResult } from "./messages.js";

type Config = ConstructorParameters<typeof pg.Client>[0];

export class SessionLocks {
  private locker: Promise<pg.Client> | undefined;
  private readonly held = new Set<string>();
  /** Lock requests run one at a time, in the order asked. */
  private queue: Promise<unknown> = Promise.resolve();
  private closing = false;

  constructor(
    private readonly pgModule: typeof pg,
    private readonly config: Config,
    private readonly event: (message: PgEvent) => void,
  ) {}

  run(request: { t: "lock" | "unlock"; space: number; key: number }): Promise<QueryResult> {
    const work = this.queue.then(async () => {
      const id = `${request.space}:${request.key}`;
      if (request.t === "unlock" && !this.held.has(id)) return { rows: [{ done: false }], rowCount: 1 };
      const client = await this.connect();
      const sql = request.t === "lock" ? "SELECT pg_try_advisory_lock($1, $2) AS done" : "SELECT pg_advisory_unlock($1, $2) AS done";
      const result = await client.query(sql, [request.space, request.key]);
      const done = result.rows[0]?.done === true;
      if (request.t === "lock" && done) this.held.add(id);
      if (request.t === "unlock") this.held.delete(id);
      if (this.held.size === 0 && this.locker) {
        // Nothing held any more: the connection is not kept open for nothing.
        this.locker = undefined;
        await client.end().catch(() => {});
      }
      return { rows: [{ done }], rowCount: 1 };
    });
    this.queue = work.catch(() => {});
    return work;
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.locker) await this.locker.then((client) => client.end()).catch(() => {});
  }

  private connect(): Promise<pg.Client> {
    if (this.locker) return this.locker;
    const client = new this.pgModule.Client(this.config);
    const ready = client.connect().then(() => client);
    const lost = () => {
      if (this.locker !== ready) return;
      this.locker = undefined;
      client.end().catch(() => {});
      if (this.held.size > 0 && !this.closing) this.event({ t: "locks-lost" });
      this.held.clear();
    };
    client.on("error", lost);
    client.on("end", lost);
    ready.catch(() => {
      if (this.locker === ready) this.locker = undefined;
    });
    this.locker = ready;
    return ready;
  }
}
