import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { sequentialIds } from "../sessions/fixtures/test-helpers.js";
import { ENGINES, useTestStores } from "./test-support.js";

const appendProcess = fileURLToPath(new URL("./fixtures/append-process.mjs", import.meta.url));
const PER_PROCESS = 300;

/** Resolves when the child printed `line` on stdout. */
function waitForLine(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.split("\n").includes(line)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`append process exited with ${code} before "${line}"`)));
  });
}

describe.each(ENGINES)("two daemon processes on one %s database", (engine) => {
  const stores = useTestStores(engine);

  it("loses no append and forms one chain when both append to one session at once", async () => {
    const location = stores.location;
    const store = stores.open({ ids: sequentialIds() });
    store.createSession({ id: "shared", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });

    const children = ["a", "b"].map((label) =>
      spawn(process.execPath, [appendProcess, location.engine === "sqlite" ? location.path : location.url, "shared", String(PER_PROCESS), label, "1"], {
        stdio: ["pipe", "pipe", "inherit"],
      }),
    );
    try {
      await Promise.all(children.map((child) => waitForLine(child, "ready")));
      const done = children.map((child) => waitForLine(child, "done"));
      for (const child of children) child.stdin!.write("go\n");
      await Promise.all(done);
      await Promise.all(children.map((child) => (child.exitCode === null ? once(child, "exit") : undefined)));

      const session = store.getSession("shared")!;
      expect(session.entryCount).toBe(2 * PER_PROCESS);
      const path = store.path("shared", session.leafId!).map((stored) => stored.entry);
      expect(path).toHaveLength(2 * PER_PROCESS);
      path.forEach((entry, index) => expect(entry.parentId).toBe(index === 0 ? null : path[index - 1]!.id));
      // Each process's appends appear in the order it made them.
      const texts = path.map((entry) =>
        entry.type === "message" && typeof entry.message.content === "string" ? entry.message.content : "",
      );
      // The two processes really took turns (else this test would prove nothing).
      const turns = texts.filter((text, i) => i > 0 && text[0] !== texts[i - 1]![0]).length;
      expect(turns).toBeGreaterThan(10);
      for (const label of ["a", "b"]) {
        expect(texts.filter((text) => text.startsWith(`${label}-`))).toEqual(
          Array.from({ length: PER_PROCESS }, (_, i) => `${label}-${i}`),
        );
      }
    } finally {
      for (const child of children) if (child.exitCode === null) child.kill();
    }
  }, 60_000);
});
