/**
 * LISTEN in the worker: one dedicated connection, reconnected with backoff (100 ms doubling to
 * 5 s). Notifications go to the main thread's event loop as `PgEvent`s.
 */
import type pg from "pg";
import type { PgEvent } from "./messages.js";

type Config = ConstructorParameters<typeof pg.Client>[0];

const quoteIdentifier = (name: string) => `"${name.replace(/"/g, '""')}"`;

export class Listener {
  private readonly channels = new Set<string>();
  private client: pg.Client | undefined;
  private ready: Promise<pg.Client> | undefined;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private backoffMs = 100;
  /** LISTEN/UNLISTEN run one at a time, in the order asked. */
  private queue: Promise<unknown> = Promise.resolve();
  private closing = false;

  constructor(
    private readonly pgModule: typeof pg,
    private readonly config: Config,
    private readonly event: (message: PgEvent) => void,
  ) {}

  listen(channel: string): Promise<null> {
    const work = this.queue.then(async () => {
      this.channels.add(channel);
      try {
        const client = await this.connect();
        await client.query(`LISTEN ${quoteIdentifier(channel)}`);
      } catch (error) {
        this.channels.delete(channel);
        throw error;
      }
      return null;
    });
    this.queue = work.catch(() => {});
    return work;
  }

  unlisten(channel: string): void {
    this.queue = this.queue.then(async () => {
      this.channels.delete(channel);
      if (this.client) await this.client.query(`UNLISTEN ${quoteIdentifier(channel)}`).catch(() => {});
      if (this.channels.size === 0 && this.client) {
        const client = this.client;
        this.client = undefined;
        this.ready = undefined;
        await client.end().catch(() => {});
      }
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.channels.clear();
    if (this.client) await this.client.end().catch(() => {});
    else if (this.ready) await this.ready.then((client) => client.end()).catch(() => {});
  }

  private connect(): Promise<pg.Client> {
    if (this.ready) return this.ready;
    const client = new this.pgModule.Client(this.config);
    // Assigned before the async body first yields; read only by callbacks that run after.
    let ready: Promise<pg.Client> | undefined;
    ready = (async () => {
      client.on("notification", (message) => {
        this.event({ t: "notification", channel: message.channel, payload: message.payload ?? "" });
      });
      const lost = () => {
        if (this.client !== client && this.ready !== ready) return;
        this.client = undefined;
        this.ready = undefined;
        client.end().catch(() => {});
        this.scheduleReconnect();
      };
      client.on("error", lost);
      client.on("end", lost);
      try {
        await client.connect();
        for (const channel of this.channels) await client.query(`LISTEN ${quoteIdentifier(channel)}`);
      } catch (error) {
        if (this.ready === ready) this.ready = undefined;
        client.end().catch(() => {});
        throw error;
      }
      this.client = client;
      this.backoffMs = 100;
      return client;
    })();
    this.ready = ready;
    return ready;
  }

  private scheduleReconnect(): void {
    if (this.closing || this.channels.size === 0 || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.closing || this.channels.size === 0) return;
      this.connect().then(
        () => this.event({ t: "listen-reconnected" }),
        (error) => {
          this.event({ t: "log", level: "debug", message: `LISTEN connection: ${(error as Error).message}` });
          this.backoffMs = Math.min(this.backoffMs * 2, 5000);
          this.scheduleReconnect();
        },
      );
    }, this.backoffMs);
  }
}
