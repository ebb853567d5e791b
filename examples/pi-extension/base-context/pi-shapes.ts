/** pi's shapes where they differ from the protocol's. */
import type { FileOps } from "@base-context/protocol";

/** pi's file operations (sets, by tool) → the protocol's lists; a changed file is listed as modified only, as pi does. */
export function fileListsOf(fileOps: { read: Set<string>; written: Set<string>; edited: Set<string> }): FileOps {
  const modified = new Set([...fileOps.written, ...fileOps.edited]);
  return {
    readFiles: [...fileOps.read].filter((file) => !modified.has(file)).sort(),
    modifiedFiles: [...modified].sort(),
  };
}
