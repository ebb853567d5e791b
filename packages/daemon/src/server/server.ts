/**
 * The JSON-RPC connection and the LSP-style lifecycle:
 * requests before `initialize` → -32002, after `shutdown` → -32600, `exit` ends the process
 * (0 after `shutdown`, else 1), and the daemon also ends when its input closes.
 */
import {
  createStreamConnection,
  DEFAULT_MAX_QUEUED_OUTPUT_BYTES,
  DEFAULT_SETTINGS,
  ErrorCodes,
  Exit,
  FramingError,
  Initialize,
  Initialized,
  InvalidMessageError,
  LogMessage,
  OutputFlow,
  PROTOCOL_VERSION,
  quoteInput,
  Shutdown,
} from "@base-context/protocol";
import type { Readable, Writable } from "node:stream";
import { ResponseError, type MessageConnection } from "vscode-jsonrpc/node";
import { addLogSink, log } from "../log.js";
import { ConnectionClientModel, clientLabel } from "./connection-client-model.js";
import { NotificationQueue } from "./notification-queue.js";
import type { Router, Peer } from "./router.js";


export type LifecycleState = "uninitialized" | "running" | "shutdown";

export interface ServerInfo {
  name: string;
  version: string;
}

export interface ServerOptions {
  input: Readable;
  output: Writable;
  router: Router;
  serverInfo: ServerInfo;
  capabilities: Record<string, unknown>;
  /** The largest message accepted (bytes), looked up at each message (`limits.maxMessageBytes`). */
  maxMessageBytes?: () => number;
  /**
   * Bytes of replies and notifications waiting to be written past which the client's requests
   * wait unread (`limits.maxQueuedOutputBytes`).
   */
  maxQueuedOutputBytes?: () => number;
  /** The longest summary a client's model may answer (`limits.maxSummaryBytes`), looked up at each answer. */
  maxSummaryBytes?: () => number;
  /** Who is at the other end, in log lines ("socket client 3"); default "the client". */
  peerName?: string;
  /** Names the connection in messages about its client (socket mode: several clients). */
  connectionId?: number;
  /** Called once with the client's `initialize` params (e.g. its projectDir). */
  onInitialize?(params: { projectDir?: string | undefined }): void | Promise<void>;
  /** Called when the connection ends: release resources, then the caller exits. */
  onExit(code: number): void;
}

export interface RunningServer {
  connection: MessageConnection;
  peer: Peer;
  state(): LifecycleState;
}

/**
 * A message the connection could not take. Nothing after an unreadable frame can be trusted to
 * start at a message boundary: the client was told (if it still listens) and its connection ends.
 * Over stdio that is the daemon's end, an error; on a shared daemon (a peerName) only "info",
 * since warnings reach every client as log/message and one client's garbage is none of the
 * others' business.
 */
function onProtocolError(error: Error, peerName: string | undefined, exit: (code: number) => void): void {
  const who = peerName ?? "the client";
  if (error instanceof FramingError) {
    log(peerName === undefined ? "error" : "info", `protocol error from ${who}, closing the connection: ${error.message}`);
    exit(1);
  } else if (error instanceof InvalidMessageError) {
    log("info", `answered an invalid message from ${who}: ${error.message}`);
  } else {
    log("error", `protocol error: ${error.message}`);
  }
}

export function startServer(options: ServerOptions): RunningServer {
  const { router } = options;
  // Invalid messages are answered with JSON-RPC errors before the MessageConnection sees them;
  // a frame that cannot be read ends the connection (below).
  const peerName = options.peerName ?? "the client";
  // Backpressure (output-flow.ts): a client that does not read its replies stops being read.
  const flow = new OutputFlow(options.maxQueuedOutputBytes ?? (() => DEFAULT_MAX_QUEUED_OUTPUT_BYTES), (stalled, queuedBytes) => {
    const waiting = `${Math.round(queuedBytes / 1024)} KiB of output waiting`;
    if (stalled) log("debug", `${peerName} is not reading its replies (${waiting}, limits.maxQueuedOutputBytes): its requests wait`);
    else log("debug", `${peerName} reads again (${waiting}): its requests go on`);
  });
  const connection = createStreamConnection(options.input, options.output, {
    answerInvalidMessages: true,
    flow,
    ...(options.maxMessageBytes !== undefined ? { maxMessageBytes: options.maxMessageBytes } : {}),
  });
  let state: LifecycleState = "uninitialized";
  let exited = false;
  let clientModel: ConnectionClientModel | undefined;
  const exit = (code: number) => {
    if (exited) return;
    exited = true;
    // Work this client started and still runs (a socket daemon goes on) falls back from now on.
    clientModel?.close();
    logSink.dispose();
    options.onExit(code);
  };

  // Notifications to a client that is not reading wait, coalesced and bounded (notification-queue.ts).
  const notifications = new NotificationQueue(flow, (method, params) => {
    if (!exited) void connection.sendNotification(method, params).catch(() => undefined);
  });
  const peer: Peer = {
    sendNotification: (method, params) => {
      // As in LSP, nothing unasked-for reaches a client before `initialize` (plugin news, for one).
      if (!exited && state !== "uninitialized") notifications.notify(method, params);
    },
    sendProgress: (token, value) => {
      if (!exited) notifications.notify("$/progress", { token, value });
    },
  };
  // Warnings and errors reach clients too, so an editor can show them.
  const logSink = addLogSink((level, message) => {
    if (state === "running" && (level === "error" || level === "warn")) peer.sendNotification(LogMessage.method, { level, message });
  });

  router.handle(Initialize, async (params) => {
    if (state !== "uninitialized") {
      throw new ResponseError(ErrorCodes.InvalidRequest, "initialize was already called", { code: "already_initialized" });
    }
    router.projectDir = params.projectDir;
    if (params.capabilities?.model?.complete === true) {
      clientModel = new ConnectionClientModel(
        connection,
        clientLabel(params.clientInfo, options.connectionId),
        options.maxSummaryBytes ?? (() => DEFAULT_SETTINGS.limits.maxSummaryBytes),
      );
      router.clientModel = clientModel;
      log("info", `${clientModel.label} offers its model (model/complete): summarizer.provider "auto" writes its summaries with it`);
    }
    await options.onInitialize?.({ projectDir: params.projectDir });
    state = "running";
    return { serverInfo: options.serverInfo, protocolVersion: PROTOCOL_VERSION, capabilities: options.capabilities };
  }, { lifecycle: true });
  router.handle(Shutdown, async () => {
    // Requests sent after this one are refused; those sent before are answered first (those
    // waiting on a model cancelled: Router.finishRequests).
    state = "shutdown";
    await router.finishRequests();
    return null;
  }, { lifecycle: true });

  connection.onRequest(async (method, params, token) => {
    if (state === "uninitialized" && method !== Initialize.method) {
      throw new ResponseError(ErrorCodes.ServerNotInitialized, `server not initialized: send "initialize" before ${quoteInput(method)}`, {
        code: "server_not_initialized",
      });
    }
    if (state === "shutdown") {
      throw new ResponseError(ErrorCodes.InvalidRequest, `server is shutting down: ${quoteInput(method)} refused after "shutdown"`, {
        code: "shutting_down",
      });
    }
    return router.dispatch(method, params, token, peer);
  });
  connection.onNotification(Initialized.method, () => undefined);
  connection.onNotification(Exit.method, () => exit(state === "shutdown" ? 0 : 1));
  connection.onClose(() => exit(state === "shutdown" ? 0 : 1));
  connection.onError(([error]) => onProtocolError(error, options.peerName, exit));
  options.input.on("end", () => exit(state === "shutdown" ? 0 : 1));
  connection.listen();
  return { connection, peer, state: () => state };
}
