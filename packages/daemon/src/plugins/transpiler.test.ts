import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { MessageChannel } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { tempDirs } from "../../../../test/support/temp-dir.js";
import type { Reply } from "../worker-messages.js";
import { serveTranspiler, type TranspileRequest } from "./transpiler.js";

describe("serveTranspiler", () => {
  const channel = new MessageChannel();
  const dirs = tempDirs();
  const folder = dirs.make();
  afterEach(() => {
    channel.port2.close();
    dirs.cleanup();
  });

  const ask = (request: TranspileRequest) =>
    new Promise<Reply<string>>((resolve) => {
      channel.port2.once("message", resolve);
      channel.port2.postMessage(request);
    });

  it("answers in the workers' envelope: a reply with the request's id, the code or the error", async () => {
    serveTranspiler(channel.port1);
    const file = join(folder, "a.ts");
    writeFileSync(file, "export const n: number = 1;\n");
    expect(await ask({ t: "transpile", requestId: 7, path: file })).toEqual({ t: "reply", requestId: 7, value: "export const n = 1;\n" });
    const missing = await ask({ t: "transpile", requestId: 8, path: join(folder, "missing.ts") });
    expect(missing).toMatchObject({ t: "reply", requestId: 8, error: { name: "Error", message: expect.stringContaining("ENOENT") } });
    expect(missing).not.toHaveProperty("value");
  });
});
