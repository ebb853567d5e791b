/**
 * The typed client answering requests the daemon sends (`onRequest`): the handler's AbortSignal
 * follows the daemon's `$/cancelRequest`, whenever that cancel is read.
 */
import { CancellationTokenSource, ResponseError } from "vscode-jsonrpc/node";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCodes } from "./errors.js";
import { ModelComplete } from "./methods/model.js";
import { closeConnectedPairs, connectedPair } from "./test-support.js";

const PARAMS = { purpose: "compaction", messages: [{ role: "user", content: "summarize" }], maxTokens: 100 } as const;

afterEach(closeConnectedPairs);

/** A bare connection standing in for the daemon, and a typed client at the other end (in-memory streams). */
const pair = connectedPair;

describe("BaseContextClient.onRequest", () => {
  it("aborts the handler's signal when the daemon cancels a request being handled", async () => {
    const { daemon, client } = pair();
    let started!: () => void;
    const handling = new Promise<void>((resolve) => (started = resolve));
    let aborted!: () => void;
    const sawAbort = new Promise<void>((resolve) => (aborted = resolve));
    client.onRequest(ModelComplete, (_params, signal) => {
      started();
      return new Promise(() => signal.addEventListener("abort", () => aborted(), { once: true }));
    });
    const cancellation = new CancellationTokenSource();
    void daemon.sendRequest(ModelComplete.method, PARAMS, cancellation.token).catch(() => undefined);
    await handling;
    cancellation.cancel();
    await sawAbort;
  });

  it("answers a request cancelled before it was handled with -32800, without running the handler", async () => {
    const { daemon, client } = pair();
    const handled: string[] = [];
    client.onRequest(ModelComplete, (params) => {
      handled.push(params.messages[0]!.content);
      return { text: "done" };
    });
    // The cancel is written right behind its request: the client reads it while the request still
    // waits in its queue (vscode-jsonrpc dispatches one message per turn of the event loop). Under
    // load the same happens to a request the daemon cancels a moment after sending it.
    const cancellation = new CancellationTokenSource();
    const cancelled = daemon.sendRequest(ModelComplete.method, PARAMS, cancellation.token).catch((error: unknown) => error);
    cancellation.cancel();
    // Answered in order: once this one is, the cancelled request has been dealt with.
    await expect(daemon.sendRequest(ModelComplete.method, { ...PARAMS, messages: [{ role: "user", content: "next" }] })).resolves.toEqual({
      text: "done",
    });

    const error = (await cancelled) as ResponseError<unknown>;
    expect(error).toBeInstanceOf(ResponseError);
    expect({ code: error.code, message: error.message, data: error.data }).toEqual({
      code: ErrorCodes.RequestCancelled,
      message: "model/complete was cancelled before it was handled",
      data: { code: "cancelled" },
    });
    expect(handled).toEqual(["next"]);
  });
});
