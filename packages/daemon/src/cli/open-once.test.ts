/**
 * Every CLI command opens the session database once: the daemon it works with opens it, and
 * nothing checks the file by opening it before (a first day's friction: each command opened it
 * twice). Counted at better-sqlite3's constructor, whatever opens it.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tempDirs } from "../../../../test/support/temp-dir.js";
import { importCommand } from "./import.js";
import { showCommand } from "./show.js";
import { treeCommand } from "./tree.js";

const opened = vi.hoisted(() => [] as string[]);
vi.mock("better-sqlite3", async (importOriginal) => {
  const real = (await importOriginal<{ default: new (path: string, options?: object) => object }>()).default;
  function Counted(path: string, options?: object): object {
    opened.push(path);
    return new real(path, options);
  }
  Counted.prototype = real.prototype;
  return { default: Counted };
});

const EXAMPLE = new URL("../../../../examples/sessions/refactor-auth.jsonl", import.meta.url).pathname;
const EXAMPLE_ID = "5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13";

describe("a CLI command", () => {
  const dirs = tempDirs();
  afterEach(() => dirs.cleanup());

  it("opens the session database once", async () => {
    const home = dirs.make();
    const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: { BASE_CONTEXT_HOME: home } };
    const database = join(home, "sessions.db");
    const commands = [
      () => importCommand([EXAMPLE], io),
      () => showCommand([EXAMPLE_ID, "--brief"], io),
      () => treeCommand([EXAMPLE_ID, "--print"], io),
    ];
    for (const run of commands) {
      opened.length = 0;
      expect(await run()).toBe(0);
      expect(opened.filter((path) => path === database)).toHaveLength(1);
    }
  });
});
