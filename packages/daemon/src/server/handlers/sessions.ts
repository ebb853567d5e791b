/** The session and entry methods: each one calls its SessionsApi method (see SESSION_METHODS). */
import {
  EntryAppend,
  EntryAppendMany,
  EntryGet,
  LabelSet,
  SessionBranch,
  SessionCreate,
  SessionDelete,
  SessionExport,
  SessionFork,
  SessionGet,
  SessionImport,
  SessionList,
  SessionPath,
  SessionRename,
  SessionSearch,
  SessionTree,
  SessionDidChange,
  SessionWatch,
} from "@base-context/protocol";
import type { SessionsApi } from "../../sessions/api.js";
import type { SessionService } from "../../sessions/index.js";
import type { Peer, Router } from "../router.js";

/** Registered as every other method is (`router.handle(declaration, implementation)`). */
export function registerSessionHandlers(router: Router, sessions: SessionsApi): void {
  router.handle(SessionCreate, (params) => sessions.create(params));
  router.handle(SessionList, (params) => sessions.list(params));
  router.handle(SessionSearch, (params) => sessions.search(params));
  router.handle(SessionRename, (params) => sessions.rename(params));
  router.handle(SessionGet, (params) => sessions.get(params));
  router.handle(SessionDelete, (params) => sessions.delete(params));
  router.handle(SessionFork, (params) => sessions.fork(params));
  router.handle(SessionImport, (params) => sessions.import(params));
  router.handle(SessionExport, (params) => sessions.export(params));
  router.handle(EntryAppend, (params) => sessions.append(params));
  router.handle(EntryAppendMany, (params) => sessions.appendMany(params));
  router.handle(EntryGet, (params) => sessions.getEntry(params));
  router.handle(SessionBranch, (params) => sessions.branch(params));
  router.handle(SessionPath, (params) => sessions.path(params));
  router.handle(SessionTree, (params) => sessions.tree(params));
  router.handle(LabelSet, (params) => sessions.setLabel(params));
}

/**
 * `session/watch`: this connection's `session/didChange` news, on until it asks otherwise or
 * leaves (the returned disposable, for a socket client leaving).
 */
export function registerSessionWatch(router: Router, sessions: Pick<SessionService, "watch">, peer: Peer): { dispose(): void } {
  let subscription: { dispose(): void } | undefined;
  router.handle(SessionWatch, (params) => {
    if (params.enabled) subscription ??= sessions.watch((news) => peer.sendNotification(SessionDidChange.method, news));
    else {
      subscription?.dispose();
      subscription = undefined;
    }
    return {};
  });
  return { dispose: () => subscription?.dispose() };
}
