/**
 * A previous summary read back into its parts, whoever wrote it (docs/summaries.md "Updating a
 * summary"): the structured format, Claude Code's numbered one, and what is never a part.
 */
import { describe, expect, it } from "vitest";
import { carriedProbes } from "./repair.js";
import { isHarnessLine, parseSummaryParts } from "./summary-parts.js";

/** The shape of Claude Code's stored compaction summary: preamble, analysis, numbered sections, closing instruction. */
const CLAUDE_CODE_SUMMARY = [
  "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:",
  "Analysis:",
  "1. **User's initial request**: build the importer",
  "- Error: the parser crashed - fixed by guarding nulls",
  "",
  "Summary:",
  "1. Primary Request and Intent:",
  "   - Build the CSV importer for the billing service",
  "2. Key Technical Concepts:",
  "   - Streams and back-pressure",
  "3. Files and Code Sections:",
  "   - **`src/import/csv.ts`** — New reader, added `parseRow()`",
  "     ```ts",
  "     export function parseRow(line: string) {",
  "     ```",
  "   - **`src/import/types.ts`**",
  "     - Read to learn the row type",
  "   - **`format/2`** — a helper it calls",
  "4. Errors and fixes:",
  "   - **Null rows**: the parser crashed on empty lines. Fixed by skipping them.",
  "5. Problem Solving:",
  "   - Decided to stream rather than load the file",
  "6. All user messages:",
  '   - "Build the CSV importer for billing. Never load the whole file in memory."',
  "   - (interrupted the test run)",
  '   - "now add the XLSX reader too" (after the CSV one worked)',
  "7. Pending Tasks:",
  "   - **IMP-12** (in progress): XLSX reader, needs tests",
  "8. Current Work:",
  "   Added the XLSX sheet walker.",
  "9. Optional Next Step:",
  "   Write the XLSX tests.",
  "",
  "If you need specific details from before compaction (like exact code snippets), read the full transcript at: /home/me/.claude/x.jsonl",
  "Please continue the conversation from where we left off without asking the user any further questions. Continue with the last task that you were asked to work on.",
].join("\n");

describe("reading a previous summary into its parts", () => {
  it("reads Claude Code's numbered summary without its analysis, its code or the harness's instructions", () => {
    const parts = parseSummaryParts(CLAUDE_CODE_SUMMARY);
    expect(parts.foreign).toBe(true);
    expect(parts.goal).toEqual(["Build the CSV importer for the billing service"]);
    expect(parts.userMessages).toEqual([
      "Build the CSV importer for billing. Never load the whole file in memory.",
      "now add the XLSX reader too",
    ]);
    expect(parts.inProgress).toEqual(["IMP-12 (in progress): XLSX reader, needs tests", "Added the XLSX sheet walker."]);
    expect(parts.nextSteps).toEqual(["Write the XLSX tests."]);
    expect(parts.fixedErrors).toEqual(["Null rows: the parser crashed on empty lines. Fixed by skipping them."]);
    expect(parts.files).toEqual([
      { path: "src/import/csv.ts", modified: true },
      { path: "src/import/types.ts", modified: false },
    ]);
    const everything = JSON.stringify(parts);
    expect(everything).not.toMatch(/continue the conversation|being continued|read the full transcript|export function|parseRow\(line/);
    expect(everything).not.toContain("User's initial request");
  });

  it("reads the structured format: goal lines, sections, placeholders left out, file lists", () => {
    const parts = parseSummaryParts(
      [
        "## Goal",
        "Current task: Fix the cart total",
        "",
        "## Constraints & Preferences",
        "- (none)",
        "",
        "## Progress",
        "### Done",
        "- [x] Request: add a discount field",
        "### In Progress",
        "- [ ] Rounding of discounts",
        "### Blocked",
        "- `pnpm test` (exit 1): `TypeError: x is undefined`",
        "",
        "## Key Decisions",
        "- **Keep cents**: no floats",
        "",
        "## Next Steps",
        "1. Fix the rounding",
        "",
        "## Critical Context",
        "- File modified: `src/cart.ts`",
        "",
        "<modified-files>",
        "src/cart.ts",
        "</modified-files>",
      ].join("\n"),
    );
    expect(parts.foreign).toBe(false);
    expect(parts.goal).toEqual(["Current task: Fix the cart total"]);
    expect(parts.constraints).toEqual([]);
    expect(parts.done).toEqual(["Request: add a discount field"]);
    expect(parts.inProgress).toEqual(["Rounding of discounts"]);
    expect(parts.blocked).toEqual(["`pnpm test` (exit 1): `TypeError: x is undefined`"]);
    expect(parts.decisions).toEqual(["**Keep cents**: no floats"]);
    expect(parts.nextSteps).toEqual(["Fix the rounding"]);
    expect(parts.files).toEqual([{ path: "src/cart.ts", modified: true }]);
  });

  it("knows the harness's lines wherever they appear", () => {
    expect(isHarnessLine("Please continue the conversation from where we left it off without asking the user any further questions.")).toBe(true);
    expect(isHarnessLine("<system-reminder>")).toBe(true);
    expect(isHarnessLine("Continue with the checkout page")).toBe(false);
  });

  it("repair carries only its own lines: never another summary's 'Error: …' notes or its errors-and-fixes list", () => {
    const carried = carriedProbes(CLAUDE_CODE_SUMMARY);
    expect(carried.errors).toEqual([]);
    expect(carried.files.map((f) => f.text)).toEqual(["src/import/csv.ts", "src/import/types.ts"]);
    const ours = carriedProbes("## Critical Context\n- Error (pnpm test): `TypeError: x is undefined`\n- Error: a note, not a repair line");
    expect(ours.errors.map((e) => e.text)).toEqual(["TypeError: x is undefined"]);
  });
});
