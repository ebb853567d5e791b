/**
 * Codex's rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, under `CODEX_HOME` when set):
 * one `{timestamp, type, payload}` object per line, the first a `session_meta`
 * (docs/import-formats.md#codex-codex-jsonl).
 */
import { isJsonObject } from "../json-line.js";
import { CodexLineParser } from "./parser.js";
import type { SessionFormat } from "../format.js";

/**
 * The start of a session_meta line too long to read whole for detection (its payload carries
 * Codex's whole system prompt): `{"timestamp":"…",("ordinal":0,)"type":"session_meta","payload":{`.
 */
const META_START = /^\{"timestamp":"[^"]*",(?:"ordinal":\d+,)?"type":"session_meta","payload":\{/;

function isSessionMeta(line: string): boolean {
  let value: unknown;
  try {
    value = JSON.parse(line.startsWith("\uFEFF") ? line.slice(1) : line);
  } catch {
    return META_START.test(line) && line.includes('"id":"');
  }
  return isJsonObject(value) && value.type === "session_meta" && isJsonObject(value.payload) && typeof value.payload.id === "string";
}

export const codexFormat: SessionFormat = {
  name: "codex-jsonl",
  label: "a Codex rollout",
  headerHint: 'a session_meta line ({"type":"session_meta","payload":{"id":...}})',
  // Codex's own compactions get the same retention report as Claude Code's.
  checksCompactions: true,
  // Codex writes session_meta first; a file that starts otherwise is not one of its rollouts.
  detect: (firstLines) => firstLines[0] !== undefined && isSessionMeta(firstLines[0]),
  createParser: (_ids, from) => new CodexLineParser(from),
};
