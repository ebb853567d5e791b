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
  SessionTree,
} from "@base-context/protocol";
import type { SessionsApi } from "../../sessions/api.js";
import type { Router } from "../router.js";

export function registerSessionHandlers(router: Router, sessions: SessionsApi): void {
  router.handle(SessionCreate, (p) => sessions.create(p));
  router.handle(SessionList, (p) => sessions.list(p));
  router.handle(SessionGet, (p) => sessions.get(p));
  router.handle(SessionDelete, (p) => sessions.delete(p));
  router.handle(SessionFork, (p) => sessions.fork(p));
  router.handle(SessionImport, (p) => sessions.import(p));
  router.handle(SessionExport, (p) => sessions.export(p));
  router.handle(EntryAppend, (p) => sessions.append(p));
  router.handle(EntryAppendMany, (p) => sessions.appendMany(p));
  router.handle(EntryGet, (p) => sessions.getEntry(p));
  router.handle(SessionBranch, (p) => sessions.branch(p));
  router.handle(SessionPath, (p) => sessions.path(p));
  router.handle(SessionTree, (p) => sessions.tree(p));
  router.handle(LabelSet, (p) => sessions.setLabel(p));
}
