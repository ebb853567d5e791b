/**
 * docs/protocol.md: transport, lifecycle rules, cancellation and retries, shared daemons, the
 * error codes (from errors.ts) and the list of every method, linking to the area pages.
 */
import { GENERATED_NOTICE, kindText } from "./pages.mjs";
import { anchorOf, markdownTable } from "./schema-text.mjs";
import { AREA_TITLES, METHOD_SUMMARIES } from "./summaries.mjs";

/**
 * `data.code` of the standard codes (application codes take theirs from AppErrorCode); those of
 * the transport and of the input limits are added from errors.ts (TransportErrorCode, InputErrorCode).
 */
const STANDARD_DATA_CODES = {
  InvalidRequest: ["already_initialized", "shutting_down"],
  MethodNotFound: ["method_not_found"],
  InvalidParams: ["invalid_params"],
  InternalError: ["internal_error"],
  ServerNotInitialized: ["server_not_initialized"],
  RequestCancelled: ["cancelled"],
  RequestFailed: ["request_failed"],
};

/** What each error code means; a code added to errors.ts without a line here is listed without one. */
const ERROR_MEANINGS = {
  ParseError: "the message was not valid JSON (`id` null); the connection goes on",
  InvalidRequest:
    "not a valid request: not one JSON-RPC 2.0 request object (`invalid_request`, `id` null unless the request's id could be read), " +
    "the id of a request still in flight (`duplicate_request_id`), a second `initialize`, any request after `shutdown`; " +
    "`invalid_frame` and `message_too_large` (`id` null) come just before the daemon closes the connection",
  MethodNotFound: "no such method",
  InvalidParams:
    "the params do not match the method's schema (`data.issues` lists each problem with its path), nest deeper than 128 levels " +
    "(`nesting_too_deep`), or hold an entry over `limits.maxEntryBytes` (`entry_too_large`)",
  InternalError: "a bug in the daemon; the message says what failed",
  ServerNotInitialized: "a request before `initialize`",
  RequestCancelled: "the client cancelled the request (`$/cancelRequest`); nothing was written",
  ContentModified: "the session changed under the request",
  RequestFailed: "something the daemon depends on failed (the model, a plugin); the message says what",
  SessionNotFound: "no session with that id",
  EntryNotFound: "the session has no entry with that id",
  SessionExists: "a session with that id already exists",
  EntryExists: "an entry with that id already exists in the session",
  InvalidEntry: "the entry cannot be appended (e.g. its parent is not in the session)",
  ImportFailed: "the file could not be imported; nothing was written",
  ExportFailed: "the session could not be exported; no partial file is left",
  Busy: "another long operation (compaction, navigation) is running on the session",
  RequestIdConflict: "the `requestId` was already used by another method on this session",
  NotSupported: "the daemon cannot do this (e.g. a format it does not know)",
  PluginNotFound: "no plugin with that id",
};

/** What the page says before the error table: the transport, the lifecycle, cancellation, sessions, errors. */
const GUIDE = [
  "Base Context is a context daemon: a client (an agent, an editor, in any language) starts",
  "`base-context serve` and talks JSON-RPC 2.0 to it. This reference is generated from the zod",
  "schemas in `packages/protocol`, which the daemon validates every message with; every example was",
  "recorded from a real daemon. [protocol/schema.json](protocol/schema.json) has the same schemas as",
  "JSON Schema, for code generators and validators in other languages.",
  "",
  "Clients: the typed TypeScript client in `@base-context/protocol` ([example](../examples/clients/typescript/)),",
  "and a dependency-free Python client ([example](../examples/clients/python/)).",
  "",
  "## Transport",
  "",
  "- **stdio** (`base-context serve`): the client spawns the daemon and owns it. Messages use LSP's base",
  "  framing: `Content-Length: N\\r\\n\\r\\n` followed by N bytes of UTF-8 JSON. stdout carries protocol",
  "  bytes only; the daemon logs to stderr (`BASE_CONTEXT_LOG=error|warn|info|debug`).",
  "- **Unix socket** (`base-context serve --socket <path>`): one long-lived daemon shared by several",
  "  clients (editor windows, agents), same framing. The socket is created readable and writable by its",
  "  owner only (0600). Each connection is a client with its own lifecycle; the daemon runs until",
  "  SIGTERM or SIGINT and removes the socket when it stops.",
  "- JSON-RPC 2.0. Params are always one object (by name). Method names are `area/verb`; notifications",
  "  from the daemon are `area/didSomething`. Batches (arrays of requests) are not supported: send each",
  "  request in its own message. A request id must not be reused while its request is in flight (1 and",
  "  \"1\" count as the same id).",
  "- Limits: a message over `limits.maxMessageBytes` (default 64 MiB) is refused at its header, an entry",
  "  over `limits.maxEntryBytes` (default 16 MiB) and params nested deeper than 128 levels get -32602.",
  "- A frame that cannot be read (a Content-Length that is missing or not a decimal number, header lines",
  "  not ending in CRLF, a header block over 8 KB, a message over the limit) gets an error reply with",
  "  `id: null` and ends the connection; over stdio the daemon then exits with code 1. See",
  "  [guarantees](guarantees.md#protocol-and-connections).",
  "",
  "## Lifecycle",
  "",
  "As in LSP: `initialize` (request) → `initialized` (notification) → work → `shutdown` (request) →",
  "`exit` (notification).",
  "",
  "- Requests before `initialize` fail with -32002; a second `initialize` fails with -32600.",
  "- After `shutdown` every request fails with -32600.",
  "- Over stdio, `exit` ends the daemon: exit code 0 when `shutdown` came first, else 1. The daemon",
  "  also ends when its stdin closes.",
  "- Over a socket, `exit` (or closing the connection) ends that connection only.",
  "",
  "## Cancellation, progress and retries",
  "",
  "- `$/cancelRequest { id }` cancels a long request (`compaction/run`, `tree/navigate`): its reply is",
  "  error -32800 and nothing is written.",
  "- It works both ways: the daemon's one request to a client, `model/complete` (sent only to a client",
  "  that offered its model at `initialize`), is cancelled with `$/cancelRequest` when the work it serves",
  "  is cancelled or `summarizer.timeoutMs` passes. See [protocol/model.md](protocol/model.md).",
  "- A request with a `workDoneToken` reports `$/progress { token, value }` while it runs.",
  "- A request with a `requestId` (`entry/append`, `entry/appendMany`, `compaction/run`, `turn/end`,",
  "  `tree/navigate`) is idempotent: retrying it returns the first result instead of doing the work",
  "  again. A lost reply is not proof that nothing was written: retry with the same `requestId`.",
  "",
  "## Sessions open on a shared daemon",
  "",
  "On a daemon shared over a socket, a connection has a session *open* once one of its requests named",
  "the session (`sessionId`) or created it. Notifications a request sends about a session",
  "(`compaction/didStart`, `compaction/didEnd`, `tree/didNavigate`, …) go to every connection that has",
  "it open, and `entry/didAppend` tells the others when a client appended to it (the appending client",
  "gets the reply instead). One client disconnecting does not affect the others.",
  "",
  "## Errors",
  "",
  "Standard JSON-RPC codes, and application errors in -31999..-31900. Every error the daemon sends has",
  "a stable `data.code` string to switch on; application errors add what they are about",
  "(`data.sessionId`, `data.entryId`, …).",
  "",
];

/** The error table's rows: code, name, the `data.code`s it comes with, meaning. */
function errorTableRows(errorCodes, appErrorCodes, dataCodesOfStandardCodes) {
  const dataCodeOf = new Map(Object.entries(appErrorCodes).map(([dataCode, code]) => [code, dataCode]));
  const nameOf = new Map(Object.entries(errorCodes).map(([name, code]) => [code, name]));
  const standardDataCodes = structuredClone(STANDARD_DATA_CODES);
  for (const [dataCode, code] of Object.entries(dataCodesOfStandardCodes)) {
    const codes = (standardDataCodes[nameOf.get(code)] ??= []);
    if (!codes.includes(dataCode)) codes.push(dataCode);
  }
  return Object.entries(errorCodes).map(([name, code]) => [
    `${code}`,
    name,
    (dataCodeOf.has(code) ? [dataCodeOf.get(code)] : (standardDataCodes[name] ?? [])).map((dataCode) => `\`${dataCode}\``).join(", "),
    ERROR_MEANINGS[name] ?? "",
  ]);
}

/** A table of methods per area, linking each to its page. */
function methodTablesOf(messages, areas) {
  return areas.flatMap((area) => {
    const inArea = messages.filter((message) => message.area === area);
    if (inArea.length === 0) return [];
    return [
      `### ${AREA_TITLES[area] ?? area}`,
      "",
      markdownTable(
        ["method", "kind", "summary"],
        inArea.map(({ decl, direction }) => [
          `[\`${decl.method}\`](protocol/${area}.md#${anchorOf(decl.method)})`,
          kindText(decl.kind, direction),
          METHOD_SUMMARIES[decl.method] ?? "",
        ]),
      ),
      "",
    ];
  });
}

/**
 * @param {{ messages: import("../../packages/protocol/dist/index.js").RegisteredMessage[], areas: string[],
 *           errorCodes: Record<string, number>, appErrorCodes: Record<string, number>,
 *           dataCodesOfStandardCodes?: Record<string, number>, protocolVersion: string,
 *           errorExamples: import("./examples.mjs").RequestExample[] }} input
 */
export function indexPage({ messages, areas, errorCodes, appErrorCodes, dataCodesOfStandardCodes = {}, protocolVersion, errorExamples }) {
  const errorRows = errorTableRows(errorCodes, appErrorCodes, dataCodesOfStandardCodes);
  const methodTables = methodTablesOf(messages, areas);
  const errorExampleBlocks = errorExamples.flatMap((example) => [
    `${example.title} (\`${example.method}\`):`,
    "",
    "```json",
    JSON.stringify({ jsonrpc: "2.0", id: example.id, error: example.error }, null, 2),
    "```",
    "",
  ]);
  return [
    GENERATED_NOTICE,
    "",
    `# Base Context protocol reference (version ${protocolVersion})`,
    "",
    ...GUIDE,
    markdownTable(["code", "name", "`data.code`", "meaning"], errorRows),
    "",
    ...errorExampleBlocks,
    "## Methods",
    "",
    ...methodTables,
    "Shared types: [protocol/types.md](protocol/types.md).",
    "",
  ].join("\n");
}
