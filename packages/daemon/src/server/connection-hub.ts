/**
 * The clients of one daemon shared over a socket (`serve --socket`): each connection has its own
 * JSON-RPC connection and lifecycle, all of them use the same Daemon. The hub keeps track of
 * which sessions each connection has open (named in a request, or created by it) and makes sure
 * news about a session reaches every connection that has it open:
 *
 * - notifications a request sends about a session (`compaction/didStart`, `tree/didNavigate`, …:
 *   anything sent through `ctx.notify` whose params name a `sessionId`) go to the requesting
 *   connection and to the others that have that session open;
 * - `entry/didAppend` goes to the connections that have the session open, except the one whose
 *   request appended (it has the reply). Appends are seen at the source (SessionService), so an
 *   entry written by a compaction commit or a branch summary is announced too.
 *
 * Which connection a piece of work belongs to is carried by AsyncLocalStorage across awaits.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { EntryDidAppend } from "@base-context/protocol";
import type { CancellationToken } from "vscode-jsonrpc";
import type { AppendEvent, SessionService } from "../sessions/index.js";
import { RequestActivity, Router, type Peer } from "./router.js";

/** Until the JSON-RPC connection is attached nothing can be sent (and nothing was asked). */
const DETACHED: Peer = { sendNotification: () => undefined, sendProgress: () => undefined };

export class SharedConnection {
  /** Sessions this connection named in a request or created: it hears about them. */
  readonly openSessions = new Set<string>();
  /** Sends to this connection only; set once its JSON-RPC connection exists. */
  peer: Peer = DETACHED;

  constructor(readonly id: number) {}
}

export interface ConnectionHubOptions {
  sessions: Pick<SessionService, "onDidAppend">;
  /** Every connection's requests count here (the server's background work waits for gaps in all of them). */
  activity?: RequestActivity;
}

export class ConnectionHub {
  private readonly connections = new Set<SharedConnection>();
  private readonly current = new AsyncLocalStorage<SharedConnection>();
  private readonly appendSubscription: { dispose(): void };
  private nextId = 1;
  /** Shared by the routers of every connection. */
  readonly activity: RequestActivity;

  constructor(options: ConnectionHubOptions) {
    this.activity = options.activity ?? new RequestActivity();
    this.appendSubscription = options.sessions.onDidAppend((event) => this.announceAppend(event));
  }

  add(): SharedConnection {
    const connection = new SharedConnection(this.nextId++);
    this.connections.add(connection);
    return connection;
  }

  remove(connection: SharedConnection): void {
    this.connections.delete(connection);
  }

  get size(): number {
    return this.connections.size;
  }

  /** A router for one connection: its requests run as that connection's work. */
  routerFor(connection: SharedConnection): Router {
    return new SharedConnectionRouter(this, connection);
  }

  /** Runs a request of `connection`, with notifications about its sessions fanned out. */
  async dispatch(connection: SharedConnection, request: () => Promise<unknown>): Promise<unknown> {
    return this.current.run(connection, request);
  }

  /** The peer a request of `connection` sends through: session notifications reach every client that has the session open. */
  fanOutPeer(connection: SharedConnection, own: Peer): Peer {
    return {
      sendNotification: (method, params) => {
        own.sendNotification(method, params);
        const sessionId = sessionIdOf(params);
        if (sessionId !== undefined) this.sendToOthers(connection, sessionId, method, params);
      },
      sendProgress: (token, value) => own.sendProgress(token, value),
    };
  }

  dispose(): void {
    this.appendSubscription.dispose();
    this.connections.clear();
  }

  private announceAppend(event: AppendEvent): void {
    const params = { sessionId: event.sessionId, entryIds: event.entryIds, leafId: event.leafId };
    this.sendToOthers(this.current.getStore(), event.sessionId, EntryDidAppend.method, params);
  }

  private sendToOthers(origin: SharedConnection | undefined, sessionId: string, method: string, params: unknown): void {
    for (const other of this.connections) {
      if (other !== origin && other.openSessions.has(sessionId)) other.peer.sendNotification(method, params);
    }
  }
}

/** Notes the sessions a request names (and a result creates) before and after dispatching it. */
class SharedConnectionRouter extends Router {
  constructor(
    private readonly hub: ConnectionHub,
    private readonly connection: SharedConnection,
  ) {
    super(hub.activity);
  }

  override async dispatch(method: string, rawParams: unknown, token: CancellationToken, peer: Peer): Promise<unknown> {
    const named = sessionIdOf(rawParams);
    if (named !== undefined) this.connection.openSessions.add(named);
    const result = await this.hub.dispatch(this.connection, () =>
      super.dispatch(method, rawParams, token, this.hub.fanOutPeer(this.connection, peer)),
    );
    // session/create, session/import, session/fork: the new session is open for its creator.
    const created = createdSessionIdOf(result);
    if (created !== undefined) this.connection.openSessions.add(created);
    return result;
  }
}

function sessionIdOf(params: unknown): string | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const sessionId = (params as { sessionId?: unknown }).sessionId;
  return typeof sessionId === "string" && sessionId.length > 0 ? sessionId : undefined;
}

function createdSessionIdOf(result: unknown): string | undefined {
  if (typeof result !== "object" || result === null) return undefined;
  const session = (result as { session?: unknown }).session;
  if (typeof session !== "object" || session === null) return undefined;
  const id = (session as { id?: unknown }).id;
  return typeof id === "string" ? id : undefined;
}
