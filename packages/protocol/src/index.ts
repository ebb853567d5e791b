export * from "./entries.js";
export * from "./errors.js";
export * from "./limits.js";
export * from "./declare.js";
export * from "./methods/lifecycle.js";
export * from "./methods/sessions.js";
export * from "./methods/context.js";
export * from "./methods/compaction.js";
export * from "./methods/tree.js";
export * from "./methods/summarize.js";
export * from "./methods/settings.js";
export * from "./default-settings.js";
export * from "./methods/plugins.js";
export * from "./methods/model.js";
export * from "./client.js";
export {
  createStreamConnection,
  DEFAULT_MAX_MESSAGE_BYTES,
  StreamFrameReader,
  StreamFrameWriter,
  type StreamConnectionOptions,
  type StreamFrameReaderOptions,
} from "./transport/stream-transport.js";
export { FramingError, InvalidMessageError, MAX_METHOD_CHARS, MessageGuard } from "./transport/message-guard.js";
export { DEFAULT_MAX_QUEUED_OUTPUT_BYTES, MAX_REQUESTS_IN_FLIGHT, OutputFlow } from "./transport/output-flow.js";
export { jsonPieces } from "./transport/json-pieces.js";
export * from "./registry.js";
export * from "./json-schema.js";
