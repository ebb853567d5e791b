/**
 * The TypeScript quickstart of the client docs (examples/clients/typescript/quickstart.mjs) runs
 * against the built packages and prints what its comments promise.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { tempDirs } from "./support/temp-dir.js";
import { storeEnvFor } from "./support/engine.js";
import { TEST_NODE } from "./support/test-node.js";

const QUICKSTART = join(import.meta.dirname, "..", "examples", "clients", "typescript", "quickstart.mjs");
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

describe("the TypeScript quickstart", () => {
  it("records a turn, builds the OpenAI context, handles an error, compacts with progress, exits 0", { timeout: 120_000 }, async () => {
    const home = dirs.make("bc-quickstart-");
    const env: NodeJS.ProcessEnv = { ...process.env, BASE_CONTEXT_HOME: home, ...storeEnvFor(home), BASE_CONTEXT_LOG: "error" };
    delete env.OPENAI_API_KEY;
    const { stdout } = await promisify(execFile)(TEST_NODE, [QUICKSTART], { env, timeout: 110_000 });
    expect(stdout).toMatch(/^connected to base-context \d+\.\d+\.\d+$/m);
    expect(stdout).toMatch(/^session [0-9a-f-]{36}: 3 entries, leaf [0-9a-f]{8}$/m);
    expect(stdout).toMatch(/^context: 3 messages, \d+ tokens$/m);
    expect(stdout).toContain('  tool: "export { main } from \'./main.js\';"');
    expect(stdout).toContain('error -31999 (session_not_found): no session with id "no-such-session"');
    expect(stdout).toContain("imported 69 entries into 5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13");
    expect(stdout).toContain("  compaction/didStart (manual)");
    expect(stdout).toMatch(/^  \$\/progress \{"kind":"begin"/m);
    expect(stdout).toContain("  compaction/didEnd: committed");
    expect(stdout).toMatch(/^compaction committed by extractive/m);
    expect(stdout.trimEnd().split("\n").at(-1)).toBe("daemon exited with code 0");
  });
});
