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

export function request<M extends string, P extends z.ZodType, R extends z.ZodType>(
  method: M,
  params: P,
  result: R,
  options: { sentBy?: "daemon" } = {},
): RequestDecl<M, P, R> {
  return { kind: "request", method, params, result, type: new RequestType(method), ...(options.sentBy ? { sentBy: options.sentBy } : {}) };
}

export function notification<M extends string, P extends z.ZodType>(method: M, params: P): NotificationDecl<M, P> {
  return { kind: "notification", method, params, type: new NotificationType(method) };
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
