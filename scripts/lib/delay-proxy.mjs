// A TCP proxy on 127.0.0.1 that delays every chunk it forwards, each way, by `delayMs`: a
// PostgreSQL server on this machine then answers as one across a network would (a round trip
// costs at least twice the delay). Used by the PostgreSQL bench (`BENCH_PG_DELAY_MS`) and by the
// socket-mode test on PostgreSQL. Chunks keep their order (timers of one duration fire in the
// order they were set) and are not held back by one another: the delay is latency, not bandwidth.
import { connect, createServer } from "node:net";

/**
 * Starts the proxy to `target` ({ host, port }); resolves to { host, port, url(of), stop() }.
 * `url(of)` rewrites a postgres:// URL to go through the proxy.
 */
export async function startDelayProxy(target, delayMs = 1) {
  const sockets = new Set();
  const forward = (from, to) => {
    from.on("data", (chunk) => setTimeout(() => to.destroyed || to.write(chunk), delayMs));
    from.on("end", () => setTimeout(() => to.destroyed || to.end(), delayMs));
  };
  const server = createServer((client) => {
    client.setNoDelay(true);
    const upstream = connect({ host: target.host, port: target.port });
    upstream.setNoDelay(true);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    }
    const fail = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", fail);
    upstream.on("error", fail);
    client.on("close", () => setTimeout(() => upstream.destroy(), delayMs));
    upstream.on("close", () => setTimeout(() => client.destroy(), delayMs));
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  return {
    host: "127.0.0.1",
    port,
    delayMs,
    /** `url` with its host and port replaced by the proxy's. */
    url(of) {
      const parsed = new URL(of);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(port);
      return parsed.toString();
    },
    stop() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The host and port a postgres:// URL names (PostgreSQL's default port when it names none). */
export function postgresTarget(url) {
  const parsed = new URL(url);
  return { host: parsed.hostname || "127.0.0.1", port: Number(parsed.port || 5432) };
}
