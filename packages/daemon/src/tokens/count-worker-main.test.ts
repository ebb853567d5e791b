import { once } from "node:events";
import type { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import type { Reply } from "../worker-messages.js";
import { startWorker } from "../workers/start-worker.js";
import type { CountRequest, LoadedReply } from "./count-messages.js";

describe("the token counting worker's messages", () => {
  let worker: Worker | undefined;
  afterEach(async () => {
    await worker?.terminate();
    worker = undefined;
  });

  /** The next message the worker posts. */
  const next = async <T>(from: Worker): Promise<T> => ((await once(from, "message")) as [T])[0];

  it("speak the workers' envelope: loaded first, then a reply per count with the request's id", async () => {
    worker = startWorker("token-count", { data: { encoding: "o200k_base" } });
    const loaded = await next<LoadedReply>(worker);
    expect(loaded.t).toBe("loaded");
    expect(loaded.loadMs).toBeGreaterThan(0);

    const ask = (request: CountRequest) => {
      worker!.postMessage(request);
      return next<Reply<number[]>>(worker!);
    };
    expect(await ask({ t: "count", requestId: 7, texts: ["hello world", ""] })).toEqual({ t: "reply", requestId: 7, value: [2, 0] });
    // A text that is not one fails the request, as data: an error with its name and message.
    const failed = await ask({ t: "count", requestId: 8, texts: [null as unknown as string] });
    expect(failed).toMatchObject({ t: "reply", requestId: 8, error: { name: "TypeError" } });
    expect(failed.value).toBeUndefined();
  });
});
