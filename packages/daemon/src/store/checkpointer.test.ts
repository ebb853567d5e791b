import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const openAndLeave = fileURLToPath(new URL("./fixtures/open-and-leave.mjs", import.meta.url));

describe("checkpoint worker", () => {
  let folder: string;
  beforeEach(() => (folder = dirs.make()));
  afterEach(() => dirs.remove(folder));

  it("never keeps the process alive, even when the store is not closed", async () => {
    const child = spawn(process.execPath, [openAndLeave, join(folder, "left.db")], { stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill(), 15_000);
    const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
    clearTimeout(timer);
    expect(output).toBe("written\n");
    expect(signal).toBeNull();
    expect(code).toBe(0);
  }, 30_000);
});
