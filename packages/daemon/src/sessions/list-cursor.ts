/**
 * The opaque `session/list` cursor: the (modified time, id) of the last session of a page, so
 * the next page continues after it even when sessions are added or modified in between.
 */
import { ErrorCodes } from "@base-context/protocol";
import { ResponseError } from "vscode-jsonrpc";

export interface ListPosition {
  modifiedMs: number;
  id: string;
}

export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.modifiedMs, position.id]), "utf8").toString("base64url");
}

/** Decodes a cursor; a cursor this daemon did not make is invalid params (-32602). */
export function decodeCursor(cursor: string): ListPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2 && Number.isFinite(value[0]) && typeof value[1] === "string") {
      return { modifiedMs: value[0] as number, id: value[1] };
    }
  } catch {
    // reported below
  }
  throw new ResponseError(ErrorCodes.InvalidParams, "invalid session/list cursor: pass back a nextCursor unchanged", {
    code: "invalid_cursor",
  });
}
