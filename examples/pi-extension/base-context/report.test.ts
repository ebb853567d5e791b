import type { RetentionReport, SummarizeResult } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { attentionLines, failureReport, lostLine, reportOf, retentionLine, statusLine, summaryLines, writerName } from "./report.js";

const count = (kept: number, total: number) => ({ kept, total });
const RETENTION: RetentionReport = {
  files: count(2, 2),
  errors: count(0, 1),
  requests: count(3, 3),
  constraints: count(0, 0),
  plan: count(0, 0),
  missing: { files: [], errors: ["TypeError: x is undefined"], requests: [], constraints: [], plan: [] },
};

describe("writerName", () => {
  it("names every writer the daemon reports in words", () => {
    expect(writerName("plugin:global:marker")).toBe("plugin global:marker");
    expect(writerName("client:gpt-5", undefined)).toBe("pi's model (gpt-5)");
    expect(writerName("client")).toBe("pi's model");
    expect(writerName("openai:gpt-4o-mini")).toBe("the daemon's openai model gpt-4o-mini");
    expect(writerName("extractive")).toBe("the extractive summarizer");
    expect(writerName("client:gpt-5+extractive")).toBe("pi's model (gpt-5) and the extractive summarizer");
    expect(writerName("none")).toMatch(/previous summary carried over/);
    expect(writerName("extractive", "project:fmt")).toBe("plugin project:fmt");
  });
});

describe("reportOf", () => {
  it("says when pi's compaction settings cannot fit its model's window, above the editor and in /bc-status", () => {
    const conflict =
      "the compaction settings cannot fit the model's window (8,000 tokens): compaction.reserveTokens 16,384 + " +
      "compaction.keepRecentTokens 20,000 = 36,384, so a compacted context is still over the threshold. Lower them.";
    const result: SummarizeResult = { status: "summarized", summary: "s", summarizer: "client:m", message: `summarized 3 messages with client:m; ${conflict}` };
    const report = reportOf("compaction", result);
    expect(attentionLines(report)).toEqual([`⚠ Base Context: pi's ${conflict}`]);
    expect(summaryLines(report)).toContain(`Window: pi's ${conflict}`);
    expect(reportOf("compaction", { ...result, message: "summarized 3 messages with client:m" }).windowConflict).toBeUndefined();
  });

  it("says who wrote a summary and what it kept, with nothing needing attention", () => {
    const result: SummarizeResult = { status: "summarized", summary: "s", summarizer: "client:gpt-5", retention: RETENTION, message: "m" };
    const report = reportOf("compaction", result);
    expect(statusLine(report)).toBe("Base Context: compaction by pi's model (gpt-5) · kept 2/2 files, 0/1 errors, 3/3 requests");
    expect(attentionLines(report)).toBeUndefined();
    expect(summaryLines(report)).toContain('Lost: error "TypeError: x is undefined"');
  });

  it("says explicitly when a fallback wrote it, and why", () => {
    const result: SummarizeResult = {
      status: "summarized",
      summary: "s",
      summarizer: "extractive",
      details: {
        summarizer: "extractive",
        // A split turn: both parts failed alike.
        fallbacks: [
          { from: "client", error: 'summarizer client failed: the client "pi" answered model/complete with an error (-32603): 500 Internal Server Error\n  at provider' },
          { from: "client", error: 'summarizer client failed: the client "pi" answered model/complete with an error (-32603): 500 Internal Server Error\n  at provider' },
        ],
      },
      message: "m",
    };
    const report = reportOf("compaction", result);
    expect(report.fallback).toBe("pi's model failed (500 Internal Server Error at provider); the extractive summarizer wrote it instead");
    expect(statusLine(report)).toContain("(fallback)");
    expect(attentionLines(report)).toEqual([
      "⚠ Base Context: this compaction came from a fallback: pi's model failed (500 Internal Server Error at provider); the extractive summarizer wrote it instead",
    ]);
  });

  it("reads the older single `details.fallback` too", () => {
    const result: SummarizeResult = {
      status: "summarized",
      summarizer: "extractive",
      details: { fallback: { from: "openai:gpt-4o-mini", error: "timeout" } },
      message: "m",
    };
    expect(reportOf("branch summary", result).fallback).toMatch(/^the daemon's openai model gpt-4o-mini failed \(timeout\)/);
  });
});

describe("failureReport", () => {
  it("is one warning naming the daemon and the reason", () => {
    const report = failureReport("branch summary", "the daemon at /tmp/d.sock", "connect ENOENT /tmp/d.sock");
    expect(attentionLines(report)).toEqual([
      "⚠ Base Context: branch summary by the daemon at /tmp/d.sock failed (connect ENOENT /tmp/d.sock); pi writes it instead",
    ]);
    expect(statusLine(report)).toContain("⚠");
  });
});

describe("retention", () => {
  it("prints the kept counts and the repairs, and the first items lost", () => {
    expect(retentionLine({ ...RETENTION, repaired: { files: 0, errors: 1, constraints: 0 } })).toBe(
      "kept 2/2 files, 0/1 errors, 3/3 requests (repair added 1 item)",
    );
    const none = { ...RETENTION, files: count(0, 0), errors: count(0, 0), requests: count(0, 0) };
    expect(retentionLine(none)).toBe("nothing to keep");
    expect(lostLine(none)).toBeUndefined();
    const many = { ...RETENTION, requests: count(0, 5), missing: { ...RETENTION.missing, requests: ["a", "b", "c", "d", "e"] } };
    expect(lostLine(many)).toBe('error "TypeError: x is undefined"; request "a"; request "b" (+3 more)');
  });
});
