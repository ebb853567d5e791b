/**
 * The protocol's stream moves from fd 1 to its own descriptor while the daemon serves: no byte may
 * be lost, reordered or written to the old stream after the switch, even when the old stream
 * completes its writes late (a socket whose buffer is full).
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { SwitchingStream } from "./switching-stream.js";

/** A stream that records what it was given and completes each write only when told to. */
function slowSink(name: string, log: string[]) {
  const pending: (() => void)[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      log.push(`${name}:${chunk.toString()}`);
      pending.push(() => callback());
    },
  });
  return { stream, completeAll: () => pending.splice(0).forEach((complete) => complete()), pending };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("SwitchingStream", () => {
  it("switches between two writes: after the first stream has completed what it was given", async () => {
    const log: string[] = [];
    const first = slowSink("first", log);
    const second = slowSink("second", log);
    const stream = new SwitchingStream(first.stream);
    stream.write("a");
    stream.write("b");
    let switchedAt: number | undefined;
    const switched = stream.switchBetweenWrites(() => {
      switchedAt = log.length;
      log.push("switch");
      return second.stream;
    });
    stream.write("c");
    await tick();
    // "a" is with the first stream, not completed: nothing else has moved.
    expect(log).toEqual(["first:a"]);
    first.completeAll();
    await tick();
    first.completeAll();
    await switched;
    await tick();
    expect(switchedAt).toBe(2);
    expect(log).toEqual(["first:a", "first:b", "switch", "second:c"]);
    expect(first.pending).toHaveLength(0);
  });

  it("keeps writing to the first stream when the switch returns none", async () => {
    const log: string[] = [];
    const first = slowSink("first", log);
    const stream = new SwitchingStream(first.stream);
    const switched = stream.switchBetweenWrites(() => undefined);
    stream.write("x");
    await switched;
    await tick();
    expect(log).toEqual(["first:x"]);
  });

  it("passes empty writes through (the daemon's 'all written so far is out' marker)", async () => {
    const log: string[] = [];
    const first = slowSink("first", log);
    const stream = new SwitchingStream(first.stream);
    let done = false;
    stream.write("", () => (done = true));
    await tick();
    expect(done).toBe(false);
    first.completeAll();
    await tick();
    expect(done).toBe(true);
  });
});
