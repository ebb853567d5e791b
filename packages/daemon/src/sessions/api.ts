/**
 * The contract between server/ and sessions/: one method per protocol method, taking the
 * validated params and returning the protocol result. Errors are thrown as AppError.
 */
import type {
  EntryAppend,
  EntryAppendMany,
  EntryGet,
  LabelSet,
  ResultOf,
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
  ValidParamsOf,
} from "@base-context/protocol";

type Method<D> = (params: ValidParamsOf<D>) => ResultOf<D> | Promise<ResultOf<D>>;

export interface SessionsApi {
  create: Method<typeof SessionCreate>;
  list: Method<typeof SessionList>;
  get: Method<typeof SessionGet>;
  delete: Method<typeof SessionDelete>;
  fork: Method<typeof SessionFork>;
  import: Method<typeof SessionImport>;
  export: Method<typeof SessionExport>;
  append: Method<typeof EntryAppend>;
  appendMany: Method<typeof EntryAppendMany>;
  getEntry: Method<typeof EntryGet>;
  branch: Method<typeof SessionBranch>;
  path: Method<typeof SessionPath>;
  tree: Method<typeof SessionTree>;
  setLabel: Method<typeof LabelSet>;
}
