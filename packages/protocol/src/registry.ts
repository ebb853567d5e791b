/**
 * Every message the protocol declares, found by scanning the `methods/*` modules' exports: a
 * `request()` or `notification()` added to one of them is listed here without another edit.
 * Tools that must cover the whole protocol (the reference generator, conformance tests, clients
 * in other languages reading `protocolJsonSchema()`) enumerate it from here.
 *
 * A new `methods/<area>.ts` file needs one line in AREA_MODULES (and its export in index.ts).
 */
import { z } from "zod";
import type { NotificationDecl, RequestDecl } from "./declare.js";
import * as entries from "./entries.js";
import * as compaction from "./methods/compaction.js";
import * as context from "./methods/context.js";
import * as lifecycle from "./methods/lifecycle.js";
import * as model from "./methods/model.js";
import * as plugins from "./methods/plugins.js";
import * as sessions from "./methods/sessions.js";
import * as settings from "./methods/settings.js";
import * as summarize from "./methods/summarize.js";
import * as tree from "./methods/tree.js";

export type AnyRequestDecl = RequestDecl<string, z.ZodType, z.ZodType>;
export type AnyNotificationDecl = NotificationDecl<string, z.ZodType>;
export type AnyDecl = AnyRequestDecl | AnyNotificationDecl;

/** Areas in reading order: the lifecycle first, then the life of a session. */
const AREA_MODULES = { lifecycle, sessions, context, compaction, tree, summarize, settings, plugins, model } as const;
export type ProtocolArea = keyof typeof AREA_MODULES;
export const PROTOCOL_AREAS = Object.keys(AREA_MODULES) as ProtocolArea[];

/**
 * Who sends a message. Requests go client → daemon, except those declared `sentBy: "daemon"`
 * (`model/complete`: the daemon asks the client's model). Notifications follow the naming rule of
 * docs/design.md#naming-and-compatibility: the daemon's are `area/didSomething` (and `log/message`), always with a slash;
 * the client's are the slash-less lifecycle ones (`initialized`, `exit`).
 */
export type Direction = "toDaemon" | "toClient";

export interface RegisteredMessage {
  /** The `methods/<area>.ts` module that declares it. */
  area: ProtocolArea;
  /** Its export name, e.g. `SessionCreate`. */
  name: string;
  direction: Direction;
  decl: AnyDecl;
}

export function isDeclaration(value: unknown): value is AnyDecl {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<AnyDecl>;
  return (
    (candidate.kind === "request" || candidate.kind === "notification") &&
    typeof candidate.method === "string" &&
    typeof candidate.params === "object" &&
    candidate.params !== null
  );
}

export function directionOf(decl: AnyDecl): Direction {
  if (decl.kind === "request") return decl.sentBy === "daemon" ? "toClient" : "toDaemon";
  return decl.method.includes("/") ? "toClient" : "toDaemon";
}

let cached: readonly RegisteredMessage[] | undefined;

/**
 * Every declared message, by area (AREA_MODULES order), requests before notifications, then by
 * method name. A declaration exported under two names is listed once, under the first name.
 */
export function protocolMessages(): readonly RegisteredMessage[] {
  if (cached) return cached;
  const seen = new Set<string>();
  const found: RegisteredMessage[] = [];
  for (const area of PROTOCOL_AREAS) {
    const module: Record<string, unknown> = AREA_MODULES[area];
    const declared = Object.entries(module)
      .filter((entry): entry is [string, AnyDecl] => isDeclaration(entry[1]))
      .sort(([, a], [, b]) =>
        a.kind !== b.kind ? (a.kind === "request" ? -1 : 1) : a.method < b.method ? -1 : a.method > b.method ? 1 : 0,
      );
    for (const [name, decl] of declared) {
      if (seen.has(decl.method)) continue;
      seen.add(decl.method);
      found.push({ area, name, direction: directionOf(decl), decl });
    }
  }
  cached = Object.freeze(found);
  return cached;
}

export function findMessage(method: string): RegisteredMessage | undefined {
  return protocolMessages().find((message) => message.decl.method === method);
}

/**
 * The named schemas the protocol exports (entries, messages, settings, …), by export name: the
 * building blocks the JSON Schema refers to instead of repeating them. First name wins.
 */
export function namedSchemas(): Map<string, z.ZodType> {
  const named = new Map<string, z.ZodType>();
  const taken = new Set<z.ZodType>();
  for (const module of [entries, ...Object.values(AREA_MODULES)] as Record<string, unknown>[]) {
    for (const [name, value] of Object.entries(module)) {
      if (!(value instanceof z.ZodType) || taken.has(value) || named.has(name)) continue;
      taken.add(value);
      named.set(name, value);
    }
  }
  return named;
}
