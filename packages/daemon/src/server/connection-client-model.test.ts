import { ErrorCodes, ModelComplete, ResponseError } from "@base-context/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { CancelledError } from "../errors.js";
import { ClientModelError, type ClientCompletionParams } from "../summarizer/index.js";
import { closeConnectedPairs, connectedPair } from "../../../protocol/src/test-support.js";
import { ConnectionClientModel } from "./connection-client-model.js";

/** The daemon's side (a ConnectionClientModel) and a typed client answering it, over in-memory streams. */
function pair() {
  const { daemon, client } = connectedPair();
  return { model: new ConnectionClientModel(daemon, 'the client "test"'), client };
}

afterEach(closeConnectedPairs);

const PARAMS: ClientCompletionParams = {
  purpose: "compaction",
  system: "sys",
  messages: [{ role: "user", content: "summarize" }],
  maxTokens: 100,
  sessionId: "s1",
};

/** A promise (`raised`) and the function that resolves it. */
function flag(): { raised: Promise<void>; raise: () => void } {
  let raise!: () => void;
  const raised = new Promise<void>((resolve) => (raise = resolve));
  return { raised, raise };
}

describe("ConnectionClientModel", () => {
  it("sends model/complete and returns the client's answer", async () => {
    const { model, client } = pair();
    client.onRequest(ModelComplete, (params) => ({ text: `answer to ${params.messages[0]!.content}`, model: "m" }));
    await expect(model.complete(PARAMS, { timeoutMs: 5_000 })).resolves.toEqual({ text: "answer to summarize", model: "m" });
  });

  it("an error reply is a ClientModelError, retryable when its data says so", async () => {
    const { model, client } = pair();
    let status = 429;
    client.onRequest(ModelComplete, () => {
      throw new ResponseError(ErrorCodes.RequestFailed, "rate limited", { status });
    });
    const busy = await model.complete(PARAMS, { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(ClientModelError);
    expect((busy as ClientModelError).message).toBe('the client "test" answered model/complete with an error (-32803): rate limited');
    expect((busy as ClientModelError).retryable).toBe(true);
    status = 400;
    expect(((await model.complete(PARAMS, { timeoutMs: 5_000 }).catch((e: unknown) => e)) as ClientModelError).retryable).toBe(false);
  });

  it("an answer that is not a completion is refused with the reason", async () => {
    const { model, client } = pair();
    client.connection.onRequest(ModelComplete.method, () => ({ summary: "wrong field" }));
    const error = await model.complete(PARAMS, { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^the client "test" answered model\/complete with an invalid result: text: /);
  });

  it("no answer by the deadline fails and cancels the client's request", async () => {
    const { model, client } = pair();
    let cancelled!: () => void;
    const sawCancel = new Promise<void>((resolve) => (cancelled = resolve));
    client.onRequest(ModelComplete, (_params, signal) => new Promise(() => signal.addEventListener("abort", () => cancelled())));
    const error = await model.complete(PARAMS, { timeoutMs: 100 }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('the client "test" did not answer model/complete within 100 ms');
    await sawCancel;
  });

  it("the work's cancellation cancels the client's request (CancelledError)", async () => {
    const { model, client } = pair();
    const asked = flag();
    const cancelled = flag();
    client.onRequest(ModelComplete, (_params, signal) => {
      asked.raise();
      return new Promise(() => signal.addEventListener("abort", () => cancelled.raise()));
    });
    const controller = new AbortController();
    const call = model.complete(PARAMS, { timeoutMs: 5_000, signal: controller.signal }).catch((e: unknown) => e);
    await asked.raised;
    controller.abort();
    expect(await call).toBeInstanceOf(CancelledError);
    await cancelled.raised;
  });

  it("closing fails what waits and refuses what comes after", async () => {
    const { model, client } = pair();
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => (asked = resolve));
    client.onRequest(ModelComplete, () => {
      asked();
      return new Promise(() => undefined);
    });
    const waiting = model.complete(PARAMS, { timeoutMs: 5_000 }).catch((e: unknown) => e);
    await wasAsked;
    model.close();
    expect(((await waiting) as Error).message).toBe('the client "test" disconnected before it answered');
    expect(model.connected).toBe(false);
    const later = await model.complete(PARAMS, { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect((later as Error).message).toBe('the client "test" disconnected before it could be asked');
  });
});
