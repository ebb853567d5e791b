/**
 * The session the loop writes to: a new one, or an existing one to continue. Either way the
 * session's model is recorded with a `model_change` entry when it is not the model in use: the
 * daemon ignores a context-overflow error from "another model than the session's", so it must
 * know which model the session is on.
 */
import { ContextBuild, EntryAppend, SessionCreate, SessionGet, type BaseContextClient } from "@base-context/protocol";

export interface OpenSessionOptions {
  /** Continue this session; a new one when absent. */
  readonly sessionId?: string | undefined;
  /** The session's working folder (its project settings apply). */
  readonly cwd: string;
  readonly name?: string | undefined;
  readonly provider: string;
  readonly model: string;
}

export interface OpenedSession {
  readonly sessionId: string;
  readonly created: boolean;
  /** Entries the session already had. */
  readonly entryCount: number;
}

export async function openSession(daemon: BaseContextClient, options: OpenSessionOptions): Promise<OpenedSession> {
  let sessionId = options.sessionId;
  let entryCount = 0;
  if (sessionId === undefined) {
    const { session } = await daemon.request(SessionCreate, { cwd: options.cwd, ...(options.name ? { name: options.name } : {}) });
    sessionId = session.id;
  } else {
    entryCount = (await daemon.request(SessionGet, { sessionId })).entryCount;
  }
  const { model } = await daemon.request(ContextBuild, { sessionId });
  if (model?.provider !== options.provider || model.modelId !== options.model) {
    await daemon.request(EntryAppend, { sessionId, entry: { type: "model_change", provider: options.provider, modelId: options.model } });
  }
  return { sessionId, created: options.sessionId === undefined, entryCount };
}
