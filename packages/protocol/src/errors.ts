/**
 * Error codes that cross the wire (docs/design.md#errors; the table: docs/protocol.md). Application errors use
 * -31999..-31900 and always carry a stable `data.code` string clients can switch on.
 */
export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ServerNotInitialized: -32002,
  RequestCancelled: -32800,
  ContentModified: -32801,
  RequestFailed: -32803,
  /** Application errors, each with a stable `data.code`. */
  SessionNotFound: -31999,
  EntryNotFound: -31998,
  SessionExists: -31997,
  EntryExists: -31996,
  InvalidEntry: -31995,
  ImportFailed: -31994,
  ExportFailed: -31993,
  Busy: -31992,
  RequestIdConflict: -31991,
  NotSupported: -31990,
  PluginNotFound: -31989,
} as const;

/** The stable `data.code` string for each application error. */
export const AppErrorCode = {
  session_not_found: ErrorCodes.SessionNotFound,
  entry_not_found: ErrorCodes.EntryNotFound,
  session_exists: ErrorCodes.SessionExists,
  entry_exists: ErrorCodes.EntryExists,
  invalid_entry: ErrorCodes.InvalidEntry,
  import_failed: ErrorCodes.ImportFailed,
  export_failed: ErrorCodes.ExportFailed,
  session_busy: ErrorCodes.Busy,
  request_id_conflict: ErrorCodes.RequestIdConflict,
  not_supported: ErrorCodes.NotSupported,
  plugin_not_found: ErrorCodes.PluginNotFound,
} as const;
export type AppErrorCode = keyof typeof AppErrorCode;

/** `data` of an application error on the wire. */
export interface AppErrorData {
  code: AppErrorCode | string;
  [key: string]: unknown;
}

/**
 * `data.code` strings the daemon sends with the standard codes when input is malformed or over a
 * limit (the transport's own are in transport/message-guard.ts, TransportErrorCode).
 */
export const InputErrorCode = {
  /** -32602: params nested deeper than the daemon walks (see docs/guarantees.md). */
  nesting_too_deep: ErrorCodes.InvalidParams,
  /** -32602: an entry larger than `limits.maxEntryBytes`. */
  entry_too_large: ErrorCodes.InvalidParams,
} as const;
export type InputErrorCode = keyof typeof InputErrorCode;

/**
 * `data.code` of the errors the transport sends itself (transport/message-guard.ts) for messages
 * that are not JSON-RPC requests and frames that cannot be read (docs/guarantees.md).
 */
export const TransportErrorCode = {
  parse_error: ErrorCodes.ParseError,
  invalid_request: ErrorCodes.InvalidRequest,
  /** A method name longer than any method (transport/message-guard.ts, MAX_METHOD_CHARS). */
  method_not_found: ErrorCodes.MethodNotFound,
  duplicate_request_id: ErrorCodes.InvalidRequest,
  invalid_frame: ErrorCodes.InvalidRequest,
  message_too_large: ErrorCodes.InvalidRequest,
} as const;
export type TransportErrorCode = keyof typeof TransportErrorCode;
