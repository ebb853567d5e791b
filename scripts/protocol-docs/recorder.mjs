/**
 * Talks to a real daemon and records every exchange: the request, the reply (result or error)
 * and the notifications that arrived while it ran. The recorded exchanges become the examples of
 * the protocol reference, so every example is something the daemon really answered.
 */

/** Notifications that come from background activity (file watchers, timers): not part of any example. */
const BACKGROUND_NOTIFICATIONS = new Set(["log/message", "settings/didChange", "plugins/didChange"]);

/**
 * @typedef {{ method: string, params: unknown }} Message
 * @typedef {{ code: number, message: string, data?: unknown }} RpcError
 * @typedef {{ kind: "request", method: string, params: unknown, result?: unknown, error?: RpcError,
 *             notifications: Message[], title?: string, example: boolean }} RequestExchange
 * @typedef {{ kind: "notification", method: string, params: unknown, direction: "toDaemon" | "toClient",
 *             title?: string, example: boolean }} NotificationExchange
 * @typedef {RequestExchange | NotificationExchange} Exchange
 */

export class Recorder {
  /** @type {Exchange[]} */
  exchanges = [];

  /**
   * @param {import("../../packages/protocol/dist/index.js").BaseContextClient} client
   * @param {string} clientName shown in examples that involve several clients
   */
  connection(client, clientName) {
    /** @type {Message[] | undefined} */
    let during;
    client.connection.onNotification((method, params) => {
      if (BACKGROUND_NOTIFICATIONS.has(method)) return;
      if (during) during.push({ method, params });
      else
        this.exchanges.push({
          kind: "notification",
          method,
          params,
          direction: "toClient",
          example: true,
          title: `received by ${clientName}`,
        });
    });
    return {
      /**
       * @param {{ method: string }} decl
       * @param {unknown} params
       * @param {{ title?: string, example?: boolean }} [options] `example: false` for setup steps
       */
      request: async (decl, params, options = {}) => {
        during = [];
        /** @type {RequestExchange} */
        const exchange = { kind: "request", method: decl.method, params, notifications: during, example: options.example ?? true };
        if (options.title) exchange.title = options.title;
        try {
          exchange.result = await client.connection.sendRequest(decl.method, params);
        } catch (error) {
          const { code, message, data } = /** @type {RpcError} */ (error);
          if (typeof code !== "number") throw error;
          exchange.error = data === undefined ? { code, message } : { code, message, data };
        } finally {
          during = undefined;
        }
        this.exchanges.push(exchange);
        if (exchange.error && exchange.error.code === -32601) exchange.example = false; // not implemented (yet)
        return exchange.result;
      },
      /**
       * Answers the daemon's requests of `decl` (model/complete) with `answer(params)`, recording
       * each exchange (numbered by the daemon's request ids on this connection, from 0).
       * @param {import("../../packages/protocol/dist/index.js").AnyRequestDecl} decl
       * @param {(params: any) => unknown} answer
       */
      answer: (decl, answer) => {
        let daemonIds = 0;
        client.onRequest(decl, async (params) => {
          const exchange = {
            kind: "request",
            direction: "toClient",
            id: daemonIds++,
            method: decl.method,
            params,
            notifications: [],
            example: true,
          };
          exchange.result = await answer(params);
          this.exchanges.push(exchange);
          return exchange.result;
        });
      },
      /** @param {{ method: string }} decl @param {unknown} params */
      notify: async (decl, params) => {
        await client.connection.sendNotification(decl.method, params);
        this.exchanges.push({ kind: "notification", method: decl.method, params, direction: "toDaemon", example: true });
      },
    };
  }
}
