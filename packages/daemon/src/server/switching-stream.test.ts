/**
 * The protocol's stream moves from fd 1 to its own descriptor while the daemon serves: no byte may
 * be lost, reordered or written to the old stream after the switch, and the switch waits until the
 * old stream has written everything it was given (a socket whose buffer was full completes late).
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { SwitchingStream } from "./switching-stream.js";

/** A stream that records what it was given and completes each write only when told to. */
function slowSink(name: string, log: string[]) {
  const pending: (() => void)[] = [];
  let completed = 0;
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, callback) {
      log.push(`${name}:${chunk.toString()}`);
      pending.push(() => {
        completed++;
        callback();
      });
    },
  });
  return { stream, completeOne: () => pending.shift()?.(), completed: () => completed, pending };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Completes the sink's writes one at a time, as they come, until `done` says so. */
async function completeUntil(sink: ReturnType<typeof slowSink>, done: () => boolean): Promise<void> {
  for (let round = 0; round < 100 && !done(); round++) {
    sink.completeOne();
    await tick();
  }
}

describe("SwitchingStream", () => {
  it("switches once the first stream has written everything it was given, before anything written after", async () => {
    const log: string[] = [];
    const first = slowSink("first", log);
    const second = slowSink("second", log);
    const stream = new SwitchingStream(first.stream);
    stream.write("a");
    stream.write("b");
    let completedAtSwitch: number | undefined;
    let switched = false;
    void stream
      .switchBetweenWrites(() => {
        completedAtSwitch = first.completed();
        log.push("switch");
        return second.stream;
      })
      .then(() => (switched = true));
    stream.write("c");
    await tick();
    expect(log).toEqual(["first:a"]);
    expect(switched).toBe(false);

    await completeUntil(first, () => switched);

    expect(switched).toBe(true);
    // a, b and the empty write that asks whether they are out.
    expect(completedAtSwitch).toBe(3);
    await tick();
    expect(log).toEqual(["first:a", "first:b", "first:", "switch", "second:c"]);
  });

  it("keeps writing to the first stream when the switch returns none", async () => {
    const log: string[] = [];
    const first = slowSink("first", log);
    const stream = new SwitchingStream(first.stream);
    let switched = false;
    void stream.switchBetweenWrites(() => undefined).then(() => (switched = true));
    stream.write("x");
    await completeUntil(first, () => switched && log.includes("first:x"));
    expect(log).toEqual(["first:", "first:x"]);
  });

  it("answers an empty write once everything written before it is out (the daemon's marker)", async () => {
    const log: string[] = [];
    const first = slowSink("first", log);
    const stream = new SwitchingStream(first.stream);
    stream.write("a");
    let done = false;
    stream.write("", () => (done = true));
    await tick();
    expect(done).toBe(false);
    await completeUntil(first, () => done);
    expect(first.completed()).toBe(2);
  });

  it("reports its target's errors, and not those of a target it has left", async () => {
    const log: string[] = [];
    const first = slowSink("first", log);
    const second = slowSink("second", log);
    const stream = new SwitchingStream(first.stream);
    const errors: string[] = [];
    stream.on("error", (error) => errors.push(error.message));
    let switched = false;
    void stream.switchBetweenWrites(() => second.stream).then(() => (switched = true));
    await completeUntil(first, () => switched);
    first.stream.destroy(new Error("old socket gone"));
    await tick();
    expect(errors).toEqual([]);
    second.stream.destroy(new Error("client gone"));
    await tick();
    expect(errors).toEqual(["client gone"]);
  });
});
