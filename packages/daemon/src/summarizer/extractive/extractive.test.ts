import type { ContextMessage } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { INJECTED_TEXT_TYPE } from "@base-context/core";
import { CancelledError } from "../../errors.js";
import { assistant, bash, hostileText, largeSession, refactorAuthSession, tool, user } from "./fixtures.js";
import { ExtractiveSummarizer, extractiveSummary } from "./index.js";

const HEADINGS = [
  "## Goal",
  "## Constraints & Preferences",
  "## Progress",
  "### Done",
  "### In Progress",
  "### Blocked",
  "## Key Decisions",
  "## Next Steps",
  "## Critical Context",
];

function summarize(
  messages: ContextMessage[],
  extra: { previousSummary?: string; customInstructions?: string; maxTokens?: number } = {},
): string {
  return extractiveSummary({ kind: "history", messages, maxTokens: 13_107, ...extra });
}

/** The lines of one section (up to the next heading). */
function section(summary: string, heading: string): string {
  const start = summary.indexOf(`${heading}\n`);
  if (start < 0) throw new Error(`no section ${heading}`);
  const rest = summary.slice(start + heading.length + 1);
  const next = rest.search(/^#{2,3} /m);
  return next < 0 ? rest : rest.slice(0, next);
}

function expectHeadingsInOrder(summary: string): void {
  let position = -1;
  for (const heading of HEADINGS) {
    const at = summary.indexOf(`${heading}\n`, position + 1);
    expect(at, heading).toBeGreaterThan(position);
    position = at;
  }
}

describe("extractive summarizer", () => {
  it("produces every section of the structured format, in order", () => {
    expectHeadingsInOrder(summarize(refactorAuthSession()));
  });

  it("states the goal and constraints in the user's own words", () => {
    const summary = summarize(refactorAuthSession());
    expect(section(summary, "## Goal")).toContain(
      "Refactor the auth module in src/auth/ to use JWT instead of server-side sessions. We must keep the public API of `AuthService` unchanged.",
    );
    // The Goal is the current task, with the first request as background; not a list of every message.
    expect(section(summary, "## Goal")).toMatch(/^Current task: Great\. Now also add refresh tokens with a 7 day expiry\..*\nBackground, the first request: Refactor/);
    const constraints = section(summary, "## Constraints & Preferences");
    expect(constraints).toContain("- We must keep the public API of `AuthService` unchanged.");
    expect(constraints).toContain("- Don't touch the database layer.");
    expect(constraints).toContain("- Always use the `AUTH_SECRET` env var, never hard-code secrets.");
  });

  it("lists what was done with exact paths and commands, and errors that were fixed", () => {
    const done = section(summarize(refactorAuthSession()), "### Done");
    expect(done).toContain("- [x] Modified `src/auth/jwt.ts` (write)");
    expect(done).toContain("- [x] Modified `src/auth/service.ts` (edit ×2)");
    expect(done).toContain("- [x] Ran `pnpm test src/auth` ×2 (exit 0)");
    expect(done).toContain(
      "`pnpm test src/auth` (exit 1) failed with `TypeError: Cannot read properties of undefined (reading 'sign')`, then succeeded",
    );
    expect(done).toContain("- [x] All tests pass now.");
    expect(done).toContain("Read `src/auth/service.ts`, `src/auth/session-store.ts`, `src/config.ts`");
  });

  it("keeps the open request as the current task, the unresolved error as a blocker and the assistant's plan as the next step", () => {
    const summary = summarize(refactorAuthSession());
    expect(section(summary, "## Goal")).toContain("Current task: Great. Now also add refresh tokens with a 7 day expiry.");
    // Once: the Goal holds the current task, In Progress does not repeat it.
    expect(section(summary, "### In Progress")).toBe("- (none)\n\n");
    expect(section(summary, "### Blocked")).toContain(
      "- `pnpm typecheck` (exit 2): `src/auth/refresh.ts(3,10): error TS2304: Cannot find name 'RefreshToken'.`",
    );
    const next = section(summary, "## Next Steps");
    expect(next).toMatch(/^1\. Next I'll define the `RefreshToken` type in src\/auth\/types\.ts/m);
    // A failing command is a blocker, not a step of its own: the plan says what comes next.
    expect(next).not.toContain("Fix ");
    expect(section(summary, "## Key Decisions")).toContain(
      "- **I decided to replace SessionStore with a stateless JwtIssuer**: because it removes the shared state between instances.",
    );
    expect(section(summary, "## Critical Context")).toContain("Exact names from the user: `AuthService`, `AUTH_SECRET`");
  });

  it("says nothing is in progress once the last request was answered", () => {
    const summary = summarize([
      user("Rename `foo` to `bar` in lib/x.ts"),
      ...tool("edit", { path: "lib/x.ts", oldText: "foo", newText: "bar" }, "ok"),
      assistant("Renamed it."),
    ]);
    expect(section(summary, "### In Progress")).toBe("- (none)\n\n");
    expect(section(summary, "### Done")).toContain("Modified `lib/x.ts` (edit)");
  });

  it("is deterministic: the same messages give the same text, byte for byte", () => {
    const first = summarize(refactorAuthSession(), { customInstructions: "focus on refresh tokens" });
    const second = summarize(structuredClone(refactorAuthSession()), { customInstructions: "focus on refresh tokens" });
    expect(second).toBe(first);
  });

  it("reports user-run commands that failed and assistant errors as blockers", () => {
    const summary = summarize([
      user("Deploy the site"),
      bash("npm run deploy", "Error: EACCES: permission denied, open '/var/www/index.html'", 1),
      { role: "assistant", content: [], stopReason: "error", errorMessage: "429 Rate limit exceeded" },
    ]);
    const blocked = section(summary, "### Blocked");
    expect(blocked).toContain("`npm run deploy` (exit 1): `Error: EACCES: permission denied, open '/var/www/index.html'`");
    expect(blocked).toContain("model call: `429 Rate limit exceeded`");
  });

  it("puts the custom instructions first in the critical context", () => {
    const summary = summarize(refactorAuthSession(), { customInstructions: "remember the exact migration command" });
    expect(section(summary, "## Critical Context")).toMatch(/^- Requested focus: remember the exact migration command/);
  });

  it("asks for the user's answer when the assistant ended on a question", () => {
    const summary = summarize([
      user("Set up CI for the repo"),
      assistant("I can use GitHub Actions or CircleCI. Which one do you prefer?"),
    ]);
    expect(section(summary, "## Next Steps")).toContain("1. Get the user's answer to: `Which one do you prefer?`");
  });

  describe("with a previous summary", () => {
    const previousSummary = [
      "## Goal",
      "Migrate the billing service to Stripe",
      "",
      "## Constraints & Preferences",
      "- Keep amounts in cents",
      "",
      "## Progress",
      "### Done",
      "- [x] Added `StripeClient` in src/billing/stripe.ts",
      "",
      "### In Progress",
      "- [ ] Webhook handler for `invoice.paid`",
      "",
      "### Blocked",
      "- (none)",
      "",
      "## Key Decisions",
      "- **Use Stripe Checkout**: less PCI scope",
      "",
      "## Next Steps",
      "1. Write the webhook handler",
      "",
      "## Critical Context",
      "- Test key lives in `.env.local`",
      "",
      "<read-files>",
      "src/billing/stripe.ts",
      "</read-files>",
    ].join("\n");

    it("keeps the previous items and adds the new ones; finished work moves to Done", () => {
      const summary = summarize(
        [
          ...tool("write", { path: "src/billing/webhook.ts", content: "..." }, "ok"),
          assistant("The webhook handler is written. Next I'll add retries for failed deliveries."),
          user("Also log every webhook event id."),
        ],
        { previousSummary },
      );
      expectHeadingsInOrder(summary);
      expect(section(summary, "## Goal")).toMatch(
        /^Current task: Also log every webhook event id\.\nBackground, the first request: Migrate the billing service to Stripe\n/,
      );
      expect(section(summary, "## Constraints & Preferences")).toContain("- Keep amounts in cents");
      const done = section(summary, "### Done");
      expect(done).toContain("- [x] Added `StripeClient` in src/billing/stripe.ts");
      expect(done).toContain("- [x] Webhook handler for `invoice.paid`");
      expect(done).toContain("- [x] Modified `src/billing/webhook.ts` (write)");
      expect(section(summary, "### In Progress")).toBe("- (none)\n\n");
      expect(section(summary, "## Key Decisions")).toContain("- **Use Stripe Checkout**: less PCI scope");
      expect(section(summary, "## Next Steps")).toContain("Next I'll add retries for failed deliveries.");
      expect(section(summary, "## Next Steps")).not.toContain("Write the webhook handler");
      expect(section(summary, "## Critical Context")).toContain("- Test key lives in `.env.local`");
      expect(summary).not.toContain("<read-files>");
    });

    it("keeps previous in-progress work in progress while no turn has finished", () => {
      const summary = summarize([...tool("read", { path: "src/billing/webhook.ts" }, "...")], { previousSummary });
      expect(section(summary, "### In Progress")).toContain("- [ ] Webhook handler for `invoice.paid`");
      expect(section(summary, "## Next Steps")).toContain("1. Write the webhook handler");
    });

    it("merges summaries found inside the range (a branch that crossed a compaction)", () => {
      const summary = extractiveSummary({
        kind: "branch",
        messages: [{ role: "compactionSummary", summary: previousSummary, tokensBefore: 50_000 }, user("Try Paddle instead of Stripe.")],
        maxTokens: 2048,
      });
      expect(section(summary, "## Goal")).toMatch(
        /^Current task: Try Paddle instead of Stripe\.\nBackground, the first request: Migrate the billing service to Stripe\n/,
      );
      expect(section(summary, "### Done")).toContain("Added `StripeClient` in src/billing/stripe.ts");
    });
  });

  it("summarizes a split turn's prefix in the turn-prefix format", () => {
    const messages = refactorAuthSession().slice(0, 9);
    const summary = extractiveSummary({ kind: "turnPrefix", messages, maxTokens: 8192, previousSummary: "## Goal\nsomething older" });
    expect(summary.startsWith("## Original Request\nRefactor the auth module in src/auth/")).toBe(true);
    expect(section(summary, "## Early Progress")).toContain("- Modified `src/auth/jwt.ts` (write)");
    expect(section(summary, "## Context for Suffix")).toContain("Don't touch the database layer.");
    // The previous summary belongs to the history summary, not to the prefix.
    expect(summary).not.toContain("something older");
  });

  it("takes the split turn's request as the goal when the history before it holds only the agent's injected context", () => {
    const injected = (kind: string, text: string): ContextMessage => ({
      role: "custom",
      customType: INJECTED_TEXT_TYPE,
      content: text,
      display: false,
      details: { source: "codex", kind },
      timestamp: 0,
    });
    // As Codex starts a session: its instructions and environment, then the user's one long turn.
    const history = [
      injected("user_instructions", "# AGENTS.md instructions for /home/dev/shop\n\nAlways run the tests."),
      injected("environment_context", "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n</environment_context>"),
    ];
    const turn = [user("The cart total ignores discounts. Fix it."), ...tool("read", { path: "src/cart.ts" }, "export function total() {}")];
    const summary = extractiveSummary({ kind: "history", messages: history, followingTurn: turn, maxTokens: 13_107 });
    expect(section(summary, "## Goal")).toBe("Current task: The cart total ignores discounts. Fix it.\n\n");
    // A goal of the history's own is not replaced.
    const stated = extractiveSummary({ kind: "history", messages: [user("Add a coupon field to the checkout form.")], followingTurn: turn, maxTokens: 13_107 });
    expect(section(stated, "## Goal")).toContain("Current task: Add a coupon field to the checkout form.");
    expect(stated).not.toContain("discounts");
  });

  it("fits maxTokens (about 4 characters per token), dropping the least important items first", () => {
    const full = summarize(largeSession(40_000));
    const small = summarize(largeSession(40_000), { maxTokens: 300 });
    expect(full.length).toBeGreaterThan(1_200);
    expect(small.length).toBeLessThanOrEqual(1_200);
    expectHeadingsInOrder(small);
    // The goal is never dropped; unresolved errors outrank routine reads.
    expect(section(small, "## Goal")).toContain("Port the reporting pipeline");
  });

  it("handles a 200k-token range and keeps the first goal, the open request and the last error", () => {
    const messages = largeSession(200_000);
    const chars = JSON.stringify(messages).length;
    expect(chars).toBeGreaterThan(800_000);

    const summary = summarize(messages);
    expectHeadingsInOrder(summary);
    expect(section(summary, "## Goal")).toContain("Port the reporting pipeline from Python to TypeScript");
    expect(section(summary, "## Goal")).toContain("Current task: Finally, make the CSV export stream rows");
    expect(section(summary, "### Blocked")).toContain("RangeError: Invalid array length");
    expect(summary.length).toBeLessThanOrEqual(13_107 * 4);
  });

  // How fast, and that its time grows linearly with such text: bench/extractive.mjs.
  it("summarizes text that defeats naive patterns (long tokens, dotted runs, long lines)", () => {
    const summary = summarize(hostileText());
    expectHeadingsInOrder(summary);
    expect(summary).toContain("src/app.ts");
    expect(summary.length).toBeLessThanOrEqual(13_107 * 4);
  });

  it("rejects with CancelledError when the signal is already aborted", async () => {
    const summarizer = new ExtractiveSummarizer();
    await expect(
      summarizer.summarize({
        kind: "history",
        messages: refactorAuthSession(),
        system: "",
        prompt: "",
        maxTokens: 1000,
        signal: AbortSignal.abort(),
      }),
    ).rejects.toBeInstanceOf(CancelledError);
    const result = await summarizer.summarize({
      kind: "history",
      messages: refactorAuthSession(),
      system: "",
      prompt: "",
      maxTokens: 1000,
    });
    expect(result.summarizer).toBe("extractive");
  });
});
