import { describe, expect, it } from "vitest";
import { CancelledError } from "../errors.js";
import { InFlightRequests } from "./in-flight.js";

describe("InFlightRequests", () => {
  it("hands a retry the running promise until it settles, then forgets it", async () => {
    const requests = new InFlightRequests<string>();
    let finish!: (value: string) => void;
    const work = requests.track("s1", "r1", new Promise<string>((resolve) => (finish = resolve)));
    expect(requests.get("s1", "r1")).toBe(work);
    expect(requests.get("s1", "r2")).toBeUndefined();
    expect(requests.get("s2", "r1")).toBeUndefined();
    finish("done");
    await work;
    expect(requests.get("s1", "r1")).toBeUndefined();
  });

  it("forgets a request that failed, so a later retry runs again", async () => {
    const requests = new InFlightRequests<string>();
    const work = requests.track("s1", "r1", Promise.reject(new Error("model down")));
    await expect(work).rejects.toThrow("model down");
    expect(requests.get("s1", "r1")).toBeUndefined();
  });

  it("ends a joiner's wait when its own request is cancelled, and the work goes on for the one that started it", async () => {
    const requests = new InFlightRequests<string>();
    let finish!: (value: string) => void;
    const work = requests.track("s1", "r1", new Promise<string>((resolve) => (finish = resolve)));
    const joiner = new AbortController();
    const joined = requests.get("s1", "r1", joiner.signal)!;
    const patient = requests.get("s1", "r1", new AbortController().signal)!;
    joiner.abort(new CancelledError());
    await expect(joined).rejects.toBeInstanceOf(CancelledError);
    // Already cancelled when it joins: refused at once.
    await expect(requests.get("s1", "r1", joiner.signal)).rejects.toBeInstanceOf(CancelledError);
    finish("done");
    expect(await work).toBe("done");
    expect(await patient).toBe("done");
  });
});
