import { z } from "zod";
import { PathString } from "../limits.js";
import { notification, request } from "../declare.js";

export const PROTOCOL_VERSION = "1";

export const ClientInfo = z.object({ name: z.string(), version: z.string().optional() }).loose();

/**
 * What a client offers the daemon. Other keys are allowed and ignored. `model.complete: true`: the
 * client answers `model/complete` (the daemon may then write summaries with the client's model).
 */
export const ClientCapabilities = z
  .object({
    model: z.object({ complete: z.boolean().optional() }).loose().optional(),
  })
  .loose();
export type ClientCapabilities = z.infer<typeof ClientCapabilities>;

export const Initialize = request(
  "initialize",
  () => z.object({
    clientInfo: ClientInfo.optional(),
    processId: z.number().int().nullable().optional(),
    protocolVersion: z.string(),
    projectDir: PathString().optional(),
    capabilities: ClientCapabilities.optional(),
  }),
  () => z.object({
    serverInfo: z.object({ name: z.string(), version: z.string() }),
    protocolVersion: z.string(),
    capabilities: z.record(z.string(), z.unknown()),
  }),
);

/**
 * What a client shows its user about the daemon it talks to (pi's `/bc-status`): its version and
 * process, its home folder and its store. A PostgreSQL URL is sent with its password as "***".
 */
export const DaemonStatus = request(
  "daemon/status",
  () => z.object({}).loose().optional(),
  () => z.object({
    serverInfo: z.object({ name: z.string(), version: z.string() }),
    pid: z.number().int(),
    /** Seconds since the daemon's process started. */
    uptimeSeconds: z.number().nonnegative(),
    /** The daemon's home: settings, plugins and (by default) the SQLite file. */
    home: z.string(),
    /** Where sessions are stored: the SQLite file, or the PostgreSQL URL without its password. */
    store: z.object({ engine: z.enum(["sqlite", "postgres"]), location: z.string() }),
  }),
);
export type DaemonStatus = z.infer<typeof DaemonStatus.result>;

export const Initialized = notification("initialized", () => z.object({}).loose());
export const Shutdown = request("shutdown", () => z.object({}).loose().optional(), () => z.null());
export const Exit = notification("exit", () => z.object({}).loose().optional());

export const LogMessage = notification(
  "log/message",
  () => z.object({ level: z.enum(["error", "warn", "info", "debug"]), message: z.string() }),
);
