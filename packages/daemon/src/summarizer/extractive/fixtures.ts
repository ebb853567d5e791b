/**
 * Message builders and a realistic coding session, shared by the extractive summarizer's tests
 * and its bench. Not used by the daemon at run time.
 */
import type { AssistantMessage, BashExecutionMessage, ContextMessage, ToolResultMessage, UserMessage } from "@base-context/protocol";

export const user = (text: string): UserMessage => ({ role: "user", content: text });

export const assistant = (text: string, stopReason: AssistantMessage["stopReason"] = "stop"): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  stopReason,
});

let callCounter = 0;

/** An assistant message calling one tool (optionally with some text first), and its call id. */
export function toolCall(name: string, args: Record<string, unknown>, text?: string): { message: AssistantMessage; id: string } {
  const id = `call_${++callCounter}`;
  return {
    id,
    message: {
      role: "assistant",
      content: [...(text ? [{ type: "text" as const, text }] : []), { type: "toolCall", id, name, arguments: args }],
      stopReason: "toolUse",
    },
  };
}

export const toolResult = (id: string, toolName: string, text: string, isError = false): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName,
  content: [{ type: "text", text }],
  isError,
});

export const bash = (command: string, output: string, exitCode: number): BashExecutionMessage => ({
  role: "bashExecution",
  command,
  output,
  exitCode,
  cancelled: false,
  truncated: false,
});

/** A call and its result, in order. */
export function tool(
  name: string,
  args: Record<string, unknown>,
  result: string,
  options: { isError?: boolean; text?: string } = {},
): ContextMessage[] {
  const call = toolCall(name, args, options.text);
  return [call.message, toolResult(call.id, name, result, options.isError ?? false)];
}

/** A session refactoring an auth module: requests, constraints, edits, a failing then passing test run, an open request. */
export function refactorAuthSession(): ContextMessage[] {
  return [
    user(
      "Refactor the auth module in src/auth/ to use JWT instead of server-side sessions. We must keep the public API of `AuthService` unchanged. Don't touch the database layer.",
    ),
    ...tool("read", { path: "src/auth/service.ts" }, "export class AuthService {\n  login() {}\n}\n", {
      text: "Let me look at the current implementation.",
    }),
    ...tool("read", { path: "src/auth/session-store.ts" }, "export class SessionStore {}\n"),
    assistant(
      "The service keeps sessions in `SessionStore`. I decided to replace SessionStore with a stateless JwtIssuer because it removes the shared state between instances.",
      "toolUse",
    ),
    ...tool("write", { path: "src/auth/jwt.ts", content: "export function signToken() {}" }, "Wrote 1 file"),
    ...tool("edit", { path: "src/auth/service.ts", oldText: "SessionStore", newText: "JwtIssuer" }, "Applied 1 edit"),
    ...tool(
      "bash",
      { command: "pnpm test src/auth" },
      "FAIL src/auth/service.test.ts\n  TypeError: Cannot read properties of undefined (reading 'sign')\n\nexit code: 1",
      { isError: true },
    ),
    ...tool("edit", { path: "src/auth/service.ts", oldText: "this.jwt.sign", newText: "signToken" }, "Applied 1 edit"),
    ...tool("bash", { command: "pnpm test src/auth" }, "PASS src/auth/service.test.ts\n12 passed\nexit code: 0"),
    assistant("I've replaced the session store with JWT signing in src/auth/jwt.ts and updated `AuthService.login`. All tests pass now."),
    user("Great. Now also add refresh tokens with a 7 day expiry. Always use the `AUTH_SECRET` env var, never hard-code secrets."),
    ...tool("read", { path: "src/config.ts" }, "export const config = {}"),
    ...tool(
      "bash",
      { command: "pnpm typecheck" },
      "src/auth/refresh.ts(3,10): error TS2304: Cannot find name 'RefreshToken'.\nexit code: 2",
      { isError: true },
    ),
    assistant("Next I'll define the `RefreshToken` type in src/auth/types.ts and wire it into `AuthService.refresh`.", "toolUse"),
  ];
}

/**
 * Text that defeats naive patterns: a base64-like token and a dotted run of 100k characters each in
 * the request, a 200k-character line before a tool's error, a 200k-character answer; all of it
 * `scale` times as long. The summary must still name `src/app.ts`, and take time linear in the
 * text (bench/extractive.mjs compares scales).
 */
export function hostileText(scale = 1): ContextMessage[] {
  return [
    user(`Decode this ${"QUJD".repeat(50_000 * scale)} and also ${"a.".repeat(50_000 * scale)} then fix src/app.ts`),
    ...tool("bash", { command: "node decode.js" }, `${"x".repeat(200_000 * scale)}Error\n`, { isError: true }),
    assistant(`${"word ".repeat(40_000 * scale)}done.`),
  ];
}

/**
 * A long porting session of about `targetTokens` tokens (chars / 4): many files read, ported,
 * tested, a few follow-up requests and decisions, and at the end an open request whose command
 * fails. Deterministic: no randomness, so runs and benches compare.
 */
export function largeSession(targetTokens: number): ContextMessage[] {
  const messages: ContextMessage[] = [
    user("Port the reporting pipeline from Python to TypeScript. Keep the output format identical. Never drop rows silently."),
  ];
  let chars = 0;
  const add = (...more: ContextMessage[]): void => {
    for (const message of more) {
      messages.push(message);
      chars += JSON.stringify(message).length;
    }
  };
  const pythonSource = (i: number): string =>
    Array.from({ length: 80 }, (_, line) => `    row_${line} = transform_${i}(record["field_${line}"])  # keep ${line} as is`).join("\n");

  for (let i = 0; chars / 4 < targetTokens; i++) {
    add(...tool("read", { path: `pipeline/reports/module_${i}.py` }, pythonSource(i)));
    add(...tool("write", { path: `src/reports/module_${i}.ts`, content: `export function transform${i}() {}` }, "Wrote 1 file"));
    const failed = i % 7 === 3;
    add(
      ...tool(
        "bash",
        { command: `pnpm vitest run src/reports/module_${i}.test.ts` },
        failed ? `FAIL src/reports/module_${i}.test.ts\nAssertionError: expected 41 rows, got 40\nexit code: 1` : "PASS\nexit code: 0",
        { isError: failed },
      ),
    );
    if (failed) {
      add(...tool("edit", { path: `src/reports/module_${i}.ts`, oldText: "<", newText: "<=" }, "Applied 1 edit"));
      add(...tool("bash", { command: `pnpm vitest run src/reports/module_${i}.test.ts` }, "PASS\nexit code: 0"));
    }
    if (i % 10 === 0)
      add(assistant(`Ported module_${i}. I chose streaming iterators over arrays because the reports can exceed memory.`, "toolUse"));
    if (i % 25 === 24)
      add(user(`Also keep the \`formatCurrency${i}\` helper's rounding exactly as in Python.`), assistant("Understood, I'll keep it."));
  }
  add(user("Finally, make the CSV export stream rows instead of buffering them."));
  add(
    ...tool(
      "bash",
      { command: "pnpm vitest run src/reports/csv.test.ts" },
      "RangeError: Invalid array length\n    at buildRows (src/reports/csv.ts:42:11)\nexit code: 1",
      { isError: true },
    ),
  );
  return messages;
}

/** A summary's section under `heading` (up to the next heading or rule), trimmed; throws when there is none. */
export function section(summary: string, heading: string): string {
  const start = summary.indexOf(`${heading}\n`);
  if (start < 0) throw new Error(`no section ${heading}`);
  const rest = summary.slice(start + heading.length + 1);
  const next = rest.search(/^#{2,3} |^---$/m);
  return (next < 0 ? rest : rest.slice(0, next)).trim();
}
