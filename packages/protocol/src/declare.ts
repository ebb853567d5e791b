/**
 * Message-as-declaration: each method is declared once with its params and result schemas.
 * The server validates with the same schemas and the typed client derives its types from them.
 */
import { NotificationType, RequestType } from "vscode-jsonrpc";
import type { z } from "zod";

export interface RequestDecl<M extends string, P extends z.ZodType, R extends z.ZodType> {
  readonly kind: "request";
  readonly method: M;
  /**
   * Set on the few requests the daemon sends to its client (LSP's server-to-client requests, e.g.
   * `model/complete`); every other request goes client → daemon.
   */
  readonly sentBy?: "daemon";
  readonly params: P;
  readonly result: R;
  readonly type: RequestType<z.input<P>, z.output<R>, unknown>;
}

export interface NotificationDecl<M extends string, P extends z.ZodType> {
  readonly kind: "notification";
  readonly method: M;
  readonly params: P;
  readonly type: NotificationType<z.output<P>>;
}

/**
 * A message's schema, or a function that makes it. The protocol's own declarations pass functions:
 * a declaration's schemas are then built when first read (`decl.params` validating the first
 * request of that method, the docs generator), not when its module is loaded — a daemon's start
 * builds the schemas of the methods it is asked, not of all of them (docs/architecture.md#start-path-and-bundles).
 * Each function runs at most once, so a declaration always returns the same schema object.
 */
export type SchemaOrMaker<S extends z.ZodType> = S | (() => S);

export function request<M extends string, P extends z.ZodType, R extends z.ZodType>(
  method: M,
  params: SchemaOrMaker<P>,
  result: SchemaOrMaker<R>,
  options: { sentBy?: "daemon" } = {},
): RequestDecl<M, P, R> {
  const decl = withSchemas({ kind: "request", method }, { params, result });
  const rest = { type: new RequestType(method), ...(options.sentBy ? { sentBy: options.sentBy } : {}) };
  return Object.assign(decl, rest) as RequestDecl<M, P, R>;
}

export function notification<M extends string, P extends z.ZodType>(method: M, params: SchemaOrMaker<P>): NotificationDecl<M, P> {
  return Object.assign(withSchemas({ kind: "notification", method }, { params }), { type: new NotificationType(method) }) as NotificationDecl<M, P>;
}

/**
 * Puts each schema on `decl` under its key; one given as a function becomes a getter that makes
 * it on first read and then replaces itself with the schema (a plain, enumerable property).
 */
function withSchemas(decl: object, schemas: Record<string, SchemaOrMaker<z.ZodType>>): object {
  for (const [key, schema] of Object.entries(schemas)) {
    if (typeof schema !== "function") {
      Object.defineProperty(decl, key, { value: schema, enumerable: true, writable: true, configurable: true });
      continue;
    }
    Object.defineProperty(decl, key, {
      enumerable: true,
      configurable: true,
      get() {
        const made = schema();
        Object.defineProperty(decl, key, { value: made, enumerable: true, writable: true, configurable: true });
        return made;
      },
    });
  }
  return decl;
}

/** Params a client sends (defaults not yet applied). */
export type ParamsOf<D> = D extends RequestDecl<string, infer P, z.ZodType>
  ? z.input<P>
  : D extends NotificationDecl<string, infer P>
    ? z.input<P>
    : never;
/** Params as the server sees them after validation. */
export type ValidParamsOf<D> = D extends RequestDecl<string, infer P, z.ZodType>
  ? z.output<P>
  : D extends NotificationDecl<string, infer P>
    ? z.output<P>
    : never;
export type ResultOf<D> = D extends RequestDecl<string, z.ZodType, infer R> ? z.output<R> : never;
