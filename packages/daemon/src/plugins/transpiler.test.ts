import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { MessageChannel } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { temporaryFolder } from "../sessions/fixtures/test-helpers.js";
import type { Reply } from "../worker-messages.js";
import { serveTranspiler, type TranspileRequest } from "./transpiler.js";

describe("serveTranspiler", () => {
  const channel = new MessageChannel();
  const folder = temporaryFolder();
  afterEach(() => {
    channel.port2.close();
    folder.cleanup();
  });

  const ask = (request: TranspileRequest) =>
    new Promise<Reply<string>>((resolve) => {
      channel.port2.once("message", resolve);
      channel.port2.postMessage(request);
    });

  it("answers in the workers' envelope: a reply with the request's id, the code or the error", async () => {
    serveTranspiler(channel.port1);
    const file = join(folder.path, "a.ts");
    writeFileSync(file, "export const n: number = 1;\n");
    expect(await ask({ t: "transpile", requestId: 7, path: file })).toEqual({ t: "reply", requestId: 7, value: "export const n = 1;\n" });
    const missing = await ask({ t: "transpile", requestId: 8, path: join(folder.path, "missing.ts") });
    expect(missing).toMatchObject({ t: "reply", requestId: 8, error: { name: "Error", message: expect.stringContaining("ENOENT") } });
    expect(missing).not.toHaveProperty("value");
  });
});
