/** The session and entry methods: each one calls its SessionsApi method (see SESSION_METHODS). */
import type { RequestDecl } from "@base-context/protocol";
import type { z } from "zod";
import { SESSION_METHODS, type SessionsApi } from "../../sessions/api.js";
import type { Impl, Router } from "../router.js";

type AnyDecl = RequestDecl<string, z.ZodType, z.ZodType>;

export function registerSessionHandlers(router: Router, sessions: SessionsApi): void {
  for (const name of Object.keys(SESSION_METHODS) as (keyof SessionsApi)[]) {
    // SessionsApi is typed from the same table, so each method takes its own declaration's params;
    // TypeScript cannot follow that through a loop over the keys, hence the widening.
    const method = sessions[name] as unknown as Impl<z.ZodType, z.ZodType>;
    router.handle(SESSION_METHODS[name] as unknown as AnyDecl, (params, ctx) => method.call(sessions, params, ctx));
  }
}
