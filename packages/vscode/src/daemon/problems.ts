/**
 * What the extension tells the user when it cannot reach a daemon, with the fix: the command is
 * not found or cannot run, the daemon exits as it starts, no daemon listens on the socket, the
 * daemon cannot open its store, the daemon speaks another protocol version. Plain data (no VS
 * Code), so every message is unit-tested.
 */
export type ProblemAction = "openSettings" | "showLog" | "restart";

export interface Problem {
  /** One paragraph: what is wrong and what to do. */
  message: string;
  actions: ProblemAction[];
  /** Whether starting again by itself may help (else the extension waits for the user). */
  retry: boolean;
}

export type Failure =
  /** The daemon's process could not be started. */
  | { kind: "spawn"; command: string; code?: string | undefined; message: string }
  /** It started, then exited before (or while) answering. */
  | { kind: "exit"; commandLine: string; code: number | null; signal: string | null; stderr: string; ranMs: number }
  /** The socket of `baseContext.daemon.socket` could not be reached, or closed. */
  | { kind: "socket"; path: string; code?: string | undefined; message: string }
  /** A request failed in a way that stops the whole extension (the store, the protocol version). */
  | { kind: "rpc"; code: number; message: string; data?: unknown };

const COMMAND_SETTING = "`baseContext.daemon.command`";

export function problemFor(failure: Failure): Problem {
  switch (failure.kind) {
    case "spawn":
      return spawnProblem(failure);
    case "exit":
      return exitProblem(failure);
    case "socket":
      return socketProblem(failure);
    case "rpc":
      return rpcProblem(failure);
  }
}

function spawnProblem(failure: Extract<Failure, { kind: "spawn" }>): Problem {
  if (failure.code === "ENOENT") {
    return {
      message:
        `Base Context: the command \`${failure.command}\` was not found. Install Base Context and put \`base-context\` on the PATH ` +
        `(in a clone: \`(cd packages/daemon && npm link)\`), or set ${COMMAND_SETTING} to its full path ` +
        "(or to `node`, with the path of `packages/daemon/bin/base-context.js` in `baseContext.daemon.args`).",
      actions: ["openSettings", "showLog"],
      retry: false,
    };
  }
  if (failure.code === "EACCES") {
    return {
      message: `Base Context: \`${failure.command}\` cannot be run (permission denied). Make it executable, or set ${COMMAND_SETTING} to another command.`,
      actions: ["openSettings", "showLog"],
      retry: false,
    };
  }
  return {
    message: `Base Context: \`${failure.command}\` could not be started: ${failure.message}. Check ${COMMAND_SETTING}.`,
    actions: ["openSettings", "showLog"],
    retry: false,
  };
}

function exitProblem(failure: Extract<Failure, { kind: "exit" }>): Problem {
  const how = failure.signal ? `was killed (${failure.signal})` : `exited with code ${failure.code}`;
  const said = lastLine(failure.stderr);
  const because = said ? `: ${said}` : "";
  // Exit status 2 is a usage error: the command line is not a Base Context one.
  if (failure.code === 2) {
    return {
      message:
        `Base Context: \`${failure.commandLine}\` is not a Base Context daemon${because}. ` +
        `Check ${COMMAND_SETTING} and \`baseContext.daemon.args\` (the extension adds \`serve\`).`,
      actions: ["openSettings", "showLog"],
      retry: false,
    };
  }
  return {
    message: `Base Context: the daemon ${how}${because}. The log has the details.`,
    actions: ["showLog", "restart"],
    retry: true,
  };
}

function socketProblem(failure: Extract<Failure, { kind: "socket" }>): Problem {
  const start = `start one with \`base-context serve --socket ${failure.path}\`, or clear \`baseContext.daemon.socket\` so this window starts a daemon of its own`;
  if (failure.code === "ENOENT") {
    return { message: `Base Context: no daemon listens on ${failure.path} (there is no such socket): ${start}.`, actions: ["openSettings", "restart"], retry: true };
  }
  if (failure.code === "ECONNREFUSED") {
    return {
      message: `Base Context: nothing accepts connections on ${failure.path} (its daemon stopped without removing it): ${start}.`,
      actions: ["openSettings", "restart"],
      retry: true,
    };
  }
  if (failure.code === "EACCES") {
    return {
      message: `Base Context: ${failure.path} belongs to another user (a daemon's socket is readable by its owner only): ${start}.`,
      actions: ["openSettings"],
      retry: false,
    };
  }
  return { message: `Base Context: the connection to ${failure.path} failed: ${failure.message}.`, actions: ["showLog", "restart"], retry: true };
}

function rpcProblem(failure: Extract<Failure, { kind: "rpc" }>): Problem {
  const data = typeof failure.data === "object" && failure.data !== null ? (failure.data as Record<string, unknown>) : {};
  const hint = typeof data.hint === "string" && data.hint.length > 0 ? ` ${sentence(data.hint)}` : "";
  if (typeof data.databasePath === "string" || typeof data.storeUrl === "string") {
    const where = typeof data.databasePath === "string" ? "folder" : "server";
    return {
      message:
        `Base Context cannot open its session store: ${stripPrefix(failure.message)}.${hint} ` +
        `Check the ${where}'s permissions and free space, or point the daemon at another home with ` +
        '`"BASE_CONTEXT_HOME": "<folder>"` in `baseContext.daemon.env`.',
      actions: ["showLog", "openSettings", "restart"],
      retry: false,
    };
  }
  if (data.code === "protocol_version") {
    return { message: `Base Context: ${failure.message}. Update the extension or \`base-context\` so that both speak the same protocol.`, actions: ["showLog"], retry: false };
  }
  return { message: `Base Context: the daemon failed: ${failure.message}.`, actions: ["showLog", "restart"], retry: false };
}

function lastLine(text: string): string | undefined {
  const lines = text.split("\n").map((line) => line.trim()).filter((line) => line.length > 0);
  const last = lines[lines.length - 1];
  return last === undefined ? undefined : last.length > 300 ? `${last.slice(0, 299)}…` : last;
}

function sentence(text: string): string {
  const trimmed = text.trim().replace(/\n+/g, " ");
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** "the daemon cannot use its session database X: y" reads as "the daemon …" after "cannot open its session store: ". */
function stripPrefix(message: string): string {
  return message.replace(/^the daemon cannot (use|open) its session (database|store) /, "").replace(/\.$/, "");
}

/** A failed request as a sentence for a notification: the daemon's message, and its hint when it gave one. */
export function requestErrorText(error: unknown): string {
  if (typeof error !== "object" || error === null) return String(error);
  const { message, data } = error as { message?: unknown; data?: unknown };
  const text = typeof message === "string" && message.length > 0 ? message : String(error);
  const hint = typeof data === "object" && data !== null ? (data as { hint?: unknown }).hint : undefined;
  return typeof hint === "string" && hint.length > 0 ? `${text} (${hint.trim().replace(/\n+/g, "; ")})` : text;
}

/** Whether a request was refused for a reason a command handles itself (`data.code`, e.g. `session_exists`). */
export function errorCode(error: unknown): string | undefined {
  const data = typeof error === "object" && error !== null ? (error as { data?: unknown }).data : undefined;
  const code = typeof data === "object" && data !== null ? (data as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}
