/**
 * Which recorded exchanges become examples: for each method the first call (not a setup step),
 * then every call the scenario gave a title; for each notification the first time it was seen.
 */

/**
 * @typedef {{ kind: "request", method: string, id: number, params: unknown, result?: unknown,
 *             error?: { code: number, message: string, data?: unknown },
 *             notifications: { method: string, params: unknown }[], title?: string }} RequestExample
 * @typedef {{ kind: "notification", method: string, params: unknown, direction: "toDaemon" | "toClient",
 *             title?: string }} NotificationExample
 * @typedef {RequestExample | NotificationExample} Example
 */

/**
 * @param {import("./recorder.mjs").Exchange[]} exchanges normalized
 * @returns {Map<string, Example[]>}
 */
export function selectExamples(exchanges) {
  /** @type {Map<string, Example[]>} */
  const byMethod = new Map();
  const add = (method, example) => byMethod.set(method, [...(byMethod.get(method) ?? []), example]);
  const hasUntitled = (method) => (byMethod.get(method) ?? []).some((example) => example.title === undefined);
  let requestId = 0;

  for (const exchange of exchanges) {
    // The daemon's requests (model/complete) carry the daemon's own ids, recorded with them.
    if (exchange.kind === "request" && exchange.direction !== "toClient") requestId++;
    if (!exchange.example) continue;
    if (exchange.kind === "notification") {
      if (!byMethod.has(exchange.method))
        add(exchange.method, {
          ...pick(exchange, ["kind", "method", "params", "direction"]),
          ...(exchange.title ? { title: exchange.title } : {}),
        });
      continue;
    }
    if (exchange.title !== undefined || !hasUntitled(exchange.method)) {
      add(exchange.method, {
        ...pick(exchange, ["kind", "method", "params", "result", "error", "notifications", "title", "direction"]),
        id: exchange.direction === "toClient" ? exchange.id : requestId,
      });
    }
    for (const notification of exchange.notifications) {
      if (!byMethod.has(notification.method)) {
        add(notification.method, {
          kind: "notification",
          method: notification.method,
          params: notification.params,
          direction: "toClient",
          title: `sent while \`${exchange.method}\` runs`,
        });
      }
    }
  }
  // Untitled (the plain first call) first, then the titled variants in the order they ran.
  for (const [method, examples] of byMethod) {
    byMethod.set(method, [
      ...examples.filter((e) => e.title === undefined || e.kind === "notification"),
      ...examples.filter((e) => e.title !== undefined && e.kind === "request"),
    ]);
  }
  return byMethod;
}

function pick(object, keys) {
  return Object.fromEntries(keys.filter((key) => object[key] !== undefined).map((key) => [key, object[key]]));
}
