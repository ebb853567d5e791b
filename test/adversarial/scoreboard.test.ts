import { describe, expect, it } from "vitest";
import { formatScoreboard } from "./scoreboard.js";

describe("adversarial scoreboard", () => {
  it("prints one aligned row per scenario and a total line", () => {
    const table = formatScoreboard([
      { area: "framing", scenario: "Content-Length: abc", tried: 1, survived: 1, lost: 0 },
      { area: "sigkill", scenario: "appends", tried: 120, survived: 120, lost: 0 },
    ]);
    const lines = table.split("\n");
    expect(lines[0]).toBe("Adversarial suite");
    expect(lines[1]).toMatch(/^area\s+scenario\s+tried\s+survived\s+lost$/);
    expect(lines[2]).toMatch(/^framing\s+Content-Length: abc\s+1\s+1\s+0$/);
    expect(lines.at(-1)).toMatch(/^total\s+121\s+121\s+0$/);
    // Columns line up: every row is as wide as the header.
    expect(new Set(lines.slice(1).map((l) => l.length)).size).toBe(1);
  });
});
