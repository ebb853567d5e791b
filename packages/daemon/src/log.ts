/**
 * Logging goes to stderr only: stdout carries protocol bytes. The server may add a sink that
 * forwards messages to clients as `log/message`.
 */
export type LogLevel = "error" | "warn" | "info" | "debug";
type Sink = (level: LogLevel, message: string) => void;

const sinks = new Set<Sink>();
const order: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };
const threshold = (): number => order[(process.env.BASE_CONTEXT_LOG as LogLevel) ?? "info"] ?? order.info;

export function log(level: LogLevel, message: string): void {
  if (order[level] <= threshold()) process.stderr.write(`[base-context] ${level}: ${message}\n`);
  for (const sink of sinks) sink(level, message);
}

export function addLogSink(sink: Sink): { dispose(): void } {
  sinks.add(sink);
  return { dispose: () => void sinks.delete(sink) };
}
