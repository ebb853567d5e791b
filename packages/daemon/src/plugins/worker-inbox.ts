/**
 * What the host reads of a message from a plugin's worker before acting on it: whether it is
 * within `plugins.maxMessageBytes` (checked before parsing: its size may be the problem), which
 * call it belongs to, and whether it is the bootstrap's protocol at all.
 */
import { utf8ByteLength } from "@base-context/core";
import type { WorkerToHost } from "./wire.js";

/** A plugin's log line is cut here (the whole message is within the size limit, but a log is no place for megabytes). */
export const MAX_LOG_CHARS = 16_384;

/** A message of the bootstrap's protocol (a JSON string of an object with a `t`), else undefined. */
export function workerMessage(raw: unknown): WorkerToHost | undefined {
  if (typeof raw !== "string") return undefined;
  try {
    const message = JSON.parse(raw) as unknown;
    return typeof message === "object" && message !== null && typeof (message as { t?: unknown }).t === "string"
      ? (message as WorkerToHost)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The call a message of the bootstrap's protocol belongs to, read from its first characters only. */
export function callIdOf(raw: string): number | undefined {
  const match = /"callId":(\d+)/.exec(raw.slice(0, 200));
  return match === null ? undefined : Number(match[1]);
}

/** Whether `raw` is over `maxBytes` UTF-8 bytes, without encoding it (and mostly without scanning it). */
export function isOver(raw: string, maxBytes: number): boolean {
  if (raw.length > maxBytes) return true;
  if (raw.length * 3 <= maxBytes) return false;
  return utf8ByteLength(raw) > maxBytes;
}

export function tooLargeMessage(what: string, bytes: number | undefined, maxBytes: number): string {
  const size = bytes === undefined ? "over" : `${bytes} bytes, over`;
  return `${what} is ${size} plugins.maxMessageBytes (${maxBytes} bytes)`;
}
