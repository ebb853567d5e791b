import type { CompactionPreparation, SessionEntry } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { defaultSettings } from "../settings/defaults.js";
import { compactHookEvent, fitEntries } from "./hook-event.js";

let n = 0;
const base = () => ({ id: `e${++n}`, parentId: null, timestamp: "2026-01-01T00:00:00.000Z" });
const message = (text: string): SessionEntry => ({ ...base(), type: "message", message: { role: "user", content: text } }) as SessionEntry;
const custom = (data: string): SessionEntry => ({ ...base(), type: "custom", customType: "my-plugin", data }) as SessionEntry;
const size = (entries: readonly SessionEntry[]): number => Buffer.byteLength(JSON.stringify(entries));

describe("session_before_compact event size", () => {
  it("sends the whole branch when it fits", () => {
    const branch = [message("a"), custom("state"), message("b")];
    expect(fitEntries(branch, 1_000_000)).toEqual({ kept: branch, omitted: 0 });
  });

  it("leaves out the oldest messages first, keeping a plugin's own entries and the newest messages", () => {
    const state = custom("my state");
    const branch = [message("x".repeat(5000)), state, message("y".repeat(5000)), message("recent")];
    const { kept, omitted } = fitEntries(branch, 6000);
    expect(kept).toEqual([state, branch[2], branch[3]]);
    expect(omitted).toBe(1);
    expect(size(kept)).toBeLessThanOrEqual(6000);
  });

  it("builds an event under plugins.maxMessageBytes from a branch far over it, saying how many entries it left out", () => {
    const settings = defaultSettings();
    settings.plugins.maxMessageBytes = 64 * 1024;
    const branch = [custom("state"), ...Array.from({ length: 20 }, (_, i) => message(`${i}`.repeat(10_000)))];
    const preparation = { firstKeptEntryId: branch[20]!.id } as unknown as CompactionPreparation;
    const event = compactHookEvent(preparation, branch, undefined, settings);
    expect(Buffer.byteLength(JSON.stringify(event)) + Buffer.byteLength(JSON.stringify(settings))).toBeLessThanOrEqual(64 * 1024);
    expect(event.branchEntries[0]).toBe(branch[0]);
    expect(event.branchEntries.at(-1)).toBe(branch[20]);
    expect(event.branchEntriesOmitted).toBe(branch.length - event.branchEntries.length);
    expect(compactHookEvent(preparation, branch.slice(0, 2), "focus", settings)).toEqual({
      preparation,
      branchEntries: branch.slice(0, 2),
      customInstructions: "focus",
    });
  });
});
