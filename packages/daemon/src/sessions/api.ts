/**
 * The contract between server/ and sessions/: one method per protocol method, taking the
 * validated params and returning the protocol result. Errors are thrown as AppError.
 */
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
  type ResultOf,
  type ValidParamsOf,
} from "@base-context/protocol";

/**
 * Each SessionsApi method and the protocol method it serves: the one list of them, which types
 * SessionsApi. server/handlers/sessions.ts registers each pair (its test checks they agree).
 */
export const SESSION_METHODS = {
  create: SessionCreate,
  list: SessionList,
  search: SessionSearch,
  rename: SessionRename,
  get: SessionGet,
  delete: SessionDelete,
  fork: SessionFork,
  import: SessionImport,
  export: SessionExport,
  append: EntryAppend,
  appendMany: EntryAppendMany,
  getEntry: EntryGet,
  branch: SessionBranch,
  path: SessionPath,
  tree: SessionTree,
  setLabel: LabelSet,
} as const;

type Method<D> = (params: ValidParamsOf<D>) => ResultOf<D> | Promise<ResultOf<D>>;

export type SessionsApi = { [K in keyof typeof SESSION_METHODS]: Method<(typeof SESSION_METHODS)[K]> };
