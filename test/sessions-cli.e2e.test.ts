/**
 * `base-context sessions <query>` (full-text search through session/search), `rename`, `delete`
 * and `label`, as a user runs them on a fresh home.
 */
import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

const dirs = tempDirs();
afterEach(dirs.cleanup);

const EXAMPLE = join(import.meta.dirname, "..", "examples", "sessions", "refactor-auth.jsonl");
const PI_V3 = join(import.meta.dirname, "fixtures", "pi-v3.jsonl");
const EXAMPLE_ID = "5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13";
const PI_V3_ID = "3f2b8a1e-6c4d-4e8f-9a7b-5d1c0e2f4a6b";

async function homeWithTwoSessions(): Promise<string> {
  const home = dirs.make();
  for (const file of [EXAMPLE, PI_V3]) {
    const run = await runCli(["import", file], { home });
    expect(run.code, run.stderr).toBe(0);
  }
  return home;
}

describe("sessions search", () => {
  it("finds words anywhere in a session, not only in its first message, with the matching entries", async () => {
    const home = await homeWithTwoSessions();
    // "impersonation" is in later messages of the example, never in its first one.
    const run = await runCli(["sessions", "impersonation"], { home });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[1]).toMatch(new RegExp(`^${EXAMPLE_ID} `));
    expect(lines[2]).toMatch(/^ {4}\w{8} (user|assistant): .*[Ii]mpersonat/);
    expect(run.stdout).toMatch(/… \d+ more matching entries/);
    expect(run.stdout).toContain("1 session found, best match first");
    expect(run.stdout).not.toContain(PI_V3_ID);

    const json = JSON.parse((await runCli(["sessions", "rate limiting", "--json"], { home })).stdout) as {
      results: { session: { id: string }; nameMatches: boolean; hits: unknown[] }[];
    };
    expect(json.results.map((result) => result.session.id)).toEqual([PI_V3_ID]);
    expect(json.results[0]!.nameMatches).toBe(true);

    const none = await runCli(["sessions", "kubernetes"], { home });
    expect(none.stdout).toBe("No sessions match.\n");
  });

  it("renames a session: the name is listed and searchable", async () => {
    const home = await homeWithTwoSessions();
    const renamed = await runCli(["rename", "5b0c", "Stateless auth"], { home });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stdout).toBe(`Session ${EXAMPLE_ID} is now "Stateless auth".\n`);
    const list = await runCli(["sessions"], { home });
    expect(list.stdout).toMatch(new RegExp(`${EXAMPLE_ID} .* Stateless auth\\n`));
    const found = await runCli(["sessions", "stateless auth"], { home });
    expect(found.stdout).toContain("the name matches");
    const empty = await runCli(["rename", "5b0c", "  "], { home });
    expect(empty.code).toBe(2);
  });

  it("deletes a session only when confirmed (--yes off a terminal)", async () => {
    const home = await homeWithTwoSessions();
    const refused = await runCli(["delete", "3f2b"], { home });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`not deleting session ${PI_V3_ID} "API rate limiting" (29 entries) without confirmation`);
    expect(refused.stderr).toContain(`base-context delete ${PI_V3_ID} --yes`);
    const deleted = await runCli(["delete", "3f2b", "--yes"], { home });
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe(`Deleted session ${PI_V3_ID} "API rate limiting" (29 entries).\n`);
    expect((await runCli(["sessions"], { home })).stdout).not.toContain(PI_V3_ID);
    expect((await runCli(["sessions", "rate"], { home })).stdout).toBe("No sessions match.\n");
  });

  it("labels an entry without moving the leaf, by a unique start of its id, and clears it", async () => {
    const home = await homeWithTwoSessions();
    const before = JSON.parse((await runCli(["tree", "5b0c", "--json"], { home })).stdout) as { leafId: string };
    const labelled = await runCli(["label", "5b0c", "3a7f0579", "the ask"], { home });
    expect(labelled.code, labelled.stderr).toBe(0);
    expect(labelled.stdout).toBe('Labelled 3a7f0579 "the ask".\n');
    const tree = await runCli(["tree", "5b0c", "--filter", "labelled"], { home });
    expect(tree.stdout).toMatch(/3a7f0579 user: .*\[label: the ask\]/);
    const after = JSON.parse((await runCli(["tree", "5b0c", "--json"], { home })).stdout) as {
      leafId: string;
      nodes: { entry: { id: string; parentId: string } }[];
    };
    // The label entry is appended under the leaf (as pi does); the conversation position is the same.
    expect(after.nodes.find((node) => node.entry.id === after.leafId)!.entry.parentId).toBe(before.leafId);
    const ambiguous = await runCli(["label", "5b0c", "3a7f", "x"], { home });
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('"3a7f" is the start of more than one entry id');
    const cleared = await runCli(["label", "5b0c", "3a7f0579", "--clear"], { home });
    expect(cleared.stdout).toBe("Cleared the label of 3a7f0579.\n");
    expect((await runCli(["tree", "5b0c", "--filter", "labelled"], { home })).stdout).not.toContain("the ask");
  });
});
