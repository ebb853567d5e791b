/**
 * Backpressure of one connection: requests stop being handed on once the output queue is over its
 * limit, start again once it drained below half, and the connection hears both (the daemon logs
 * them, so a client that stopped reading can be seen).
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { OutputFlow, RequestGate } from "./output-flow.js";

describe("OutputFlow and RequestGate", () => {
  it("stops handing requests on over the limit, says so, and goes on below half", async () => {
    const stalls: [boolean, number][] = [];
    const flow = new OutputFlow(
      () => 100,
      (stalled, queued) => stalls.push([stalled, queued]),
    );
    const gate = new RequestGate(flow, () => undefined);
    const delivered: unknown[] = [];
    gate.listen((message) => delivered.push(message));

    gate.request(1, "first", 10);
    flow.added(120); // its reply is written, and the client reads nothing
    gate.answered();
    gate.request(2, "second", 10);
    await nextTurn();
    expect(delivered).toEqual(["first"]);
    expect(stalls).toEqual([[true, 120]]);

    flow.flushed(60); // 60 left: still over half of 100
    await nextTurn();
    expect(delivered).toEqual(["first"]);
    flow.flushed(20); // 40 left: below half
    await nextTurn();
    expect(delivered).toEqual(["first", "second"]);
    expect(stalls).toEqual([
      [true, 120],
      [false, 40],
    ]);
  });
});
