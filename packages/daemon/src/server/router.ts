/**
 * A table of request handlers keyed by method. `handle(decl, impl)` is the one wrapper every
 * method goes through: params validated with the declaration's schema (zod issues → -32602),
 * the cancellation token turned into an AbortSignal, errors mapped in one place.
 */
import { ErrorCodes, type NotificationDecl, type RequestDecl } from "@base-context/protocol";
import { ResponseError, type CancellationToken } from "vscode-jsonrpc";
import type { z } from "zod";
import { CancelledError } from "../errors.js";
import { invalidParams, toResponseError } from "./rpc-errors.js";

export interface RequestContext {
  method: string;
  /** Aborted when the client sends `$/cancelRequest` for this request. */
  signal: AbortSignal;
  /** Reports `$/progress` when the client gave a `workDoneToken`; a no-op otherwise. */
  progress(token: string | number | undefined, value: unknown): void;
  notify<P extends z.ZodType>(decl: NotificationDecl<string, P>, params: z.input<P>): void;
}

export type Impl<P extends z.ZodType, R extends z.ZodType> = (
  params: z.output<P>,
  ctx: RequestContext,
) => z.input<R> | Promise<z.input<R>>;

interface Entry {
  decl: RequestDecl<string, z.ZodType, z.ZodType>;
  impl: Impl<z.ZodType, z.ZodType>;
}

export interface Peer {
  sendNotification(method: string, params: unknown): void;
  sendProgress(token: string | number, value: unknown): void;
}

export class Router {
  private readonly table = new Map<string, Entry>();

  handle<P extends z.ZodType, R extends z.ZodType>(decl: RequestDecl<string, P, R>, impl: Impl<P, R>): void {
    if (this.table.has(decl.method)) throw new Error(`${decl.method} is handled twice`);
    this.table.set(decl.method, { decl, impl: impl as Impl<z.ZodType, z.ZodType> });
  }

  has(method: string): boolean {
    return this.table.has(method);
  }

  async dispatch(method: string, rawParams: unknown, token: CancellationToken, peer: Peer): Promise<unknown> {
    const entry = this.table.get(method);
    if (!entry) throw new ResponseError(ErrorCodes.MethodNotFound, `unknown method "${method}"`, { code: "method_not_found" });
    const parsed = entry.decl.params.safeParse(rawParams === undefined ? {} : rawParams);
    if (!parsed.success) throw invalidParams(method, parsed.error);

    const controller = new AbortController();
    const subscription = token.onCancellationRequested(() => controller.abort(new CancelledError()));
    if (token.isCancellationRequested) controller.abort(new CancelledError());
    const ctx: RequestContext = {
      method,
      signal: controller.signal,
      progress: (workDoneToken, value) => {
        if (workDoneToken !== undefined) peer.sendProgress(workDoneToken, value);
      },
      notify: (decl, params) => peer.sendNotification(decl.method, params),
    };
    try {
      // Work that finished despite a late cancel is reported as done: if it wrote something, the
      // client must learn it did (a cancelled reply would claim nothing was written).
      const result = await entry.impl(parsed.data, ctx);
      return result ?? null;
    } catch (error) {
      throw toResponseError(method, error);
    } finally {
      subscription.dispose();
    }
  }
}
