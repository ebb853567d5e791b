/**
 * For tests: a bare connection standing in for the daemon and a typed client at the other end,
 * over in-memory streams, both listening. `closeConnectedPairs()` (in an afterEach) disposes of
 * every pair made since.
 */
import { PassThrough } from "node:stream";
import type { MessageConnection } from "vscode-jsonrpc/node";
import { BaseContextClient } from "./client.js";
import { createStreamConnection } from "./transport/stream-transport.js";

const opened: (() => void)[] = [];

export function connectedPair(): { daemon: MessageConnection; client: BaseContextClient } {
  const toDaemon = new PassThrough();
  const toClient = new PassThrough();
  const daemon = createStreamConnection(toDaemon, toClient);
  const client = new BaseContextClient(createStreamConnection(toClient, toDaemon));
  daemon.listen();
  client.connection.listen();
  opened.push(() => {
    client.dispose();
    daemon.dispose();
  });
  return { daemon, client };
}

export function closeConnectedPairs(): void {
  for (const close of opened.splice(0)) close();
}
