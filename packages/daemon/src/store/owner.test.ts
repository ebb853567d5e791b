import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { currentOwner, isOwnerAlive, processStartIdentity } from "./owner.js";

/** The pid of a process that has ended (a short-lived child, waited for). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  return child.pid!;
}

describe("process owners", () => {
  it.runIf(process.platform === "linux")("reads a start identity that tells two processes apart", () => {
    const self = processStartIdentity(process.pid);
    expect(self).toMatch(/^[0-9a-f-]+:\d+$/);
    expect(processStartIdentity(process.ppid)).not.toBe(self);
    expect(currentOwner()).toEqual({ pid: process.pid, start: self });
  });

  it("takes this process for alive, and a process that ended for gone", () => {
    expect(isOwnerAlive(currentOwner())).toBe(true);
    expect(isOwnerAlive({ pid: deadPid(), start: null })).toBe(false);
  });

  it.runIf(process.platform === "linux")("takes a reused pid (same number, another start) for gone", () => {
    expect(isOwnerAlive({ pid: process.pid, start: "another-boot:12345" })).toBe(false);
  });

  it("decides by the pid alone where the start identity cannot be read", () => {
    expect(isOwnerAlive({ pid: 42, start: "x:1" }, { exists: () => true, startOf: () => null })).toBe(true);
    expect(isOwnerAlive({ pid: 42, start: "x:1" }, { exists: () => false, startOf: () => "x:1" })).toBe(false);
  });

  it("lets a probe that knows owners by another identity (a lease) decide for the whole owner", () => {
    const byLease = { exists: () => true, startOf: () => null, isAlive: (owner: { start: string | null }) => owner.start === "lease:7" };
    expect(isOwnerAlive({ pid: deadPid(), start: "lease:7" }, byLease)).toBe(true);
    expect(isOwnerAlive({ pid: process.pid, start: "lease:8" }, byLease)).toBe(false);
  });
});
