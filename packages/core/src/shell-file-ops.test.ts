import { describe, expect, it } from "vitest";
import { createFileOps, computeFileLists, extractFileOpsFromMessage } from "./file-ops.js";
import { patchFileOps, shellCallFileOps } from "./shell-file-ops.js";

describe("file tracking of shell and patch calls (Codex)", () => {
  it("reads the files a patch adds, updates, deletes and moves", () => {
    const patch = [
      "*** Begin Patch",
      "*** Add File: src/new.ts",
      "+x",
      "*** Update File: ./src/old.ts",
      "*** Move to: src/renamed.ts",
      "@@",
      "-a",
      "+b",
      "*** Delete File: src/gone.ts",
      "*** End Patch",
    ].join("\n");
    expect(patchFileOps(patch)).toEqual({ read: [], written: ["src/new.ts", "src/renamed.ts"], edited: ["src/old.ts", "src/gone.ts"] });
    expect(shellCallFileOps("apply_patch", { input: patch })?.written).toEqual(["src/new.ts", "src/renamed.ts"]);
  });

  it("finds a patch sent through the shell as a heredoc", () => {
    const cmd = "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: notes.md\n@@\n-hello\n+hello world\n*** End Patch\nPATCH";
    expect(shellCallFileOps("exec_command", { cmd })).toEqual({ read: [], written: [], edited: ["notes.md"] });
  });

  it("takes read files from cat, nl, sed -n, head and tail, argv or script", () => {
    expect(shellCallFileOps("exec_command", { cmd: "cat package.json" })?.read).toEqual(["package.json"]);
    expect(shellCallFileOps("shell", { command: ["bash", "-lc", "nl -ba src/cart.ts | sed -n '1,80p'"] })?.read).toEqual(["src/cart.ts"]);
    expect(shellCallFileOps("exec_command", { cmd: "sed -n '10,40p' 'src/a b.ts' && head -n 20 README.md; tail -5 log.txt" })?.read).toEqual([
      "src/a b.ts",
      "README.md",
      "log.txt",
    ]);
    expect(shellCallFileOps("local_shell", { command: ["cat", "a.txt", "b.txt"] })?.read).toEqual(["a.txt", "b.txt"]);
  });

  it("takes changed files from sed -i and redirections, and guesses nothing else", () => {
    expect(shellCallFileOps("exec_command", { cmd: "sed -i 's/a/b/' src/x.ts" })).toEqual({ read: [], written: [], edited: ["src/x.ts"] });
    expect(shellCallFileOps("exec_command", { cmd: "cat > out.txt <<'EOF'\ncat secret.txt\nEOF\necho hi >> log.txt 2>/dev/null" })).toEqual({
      read: [],
      written: ["out.txt", "log.txt"],
      edited: [],
    });
    expect(shellCallFileOps("exec_command", { cmd: "npm test && rg total src | head -3" })).toEqual({ read: [], written: [], edited: [] });
    expect(shellCallFileOps("read", { path: "x" })).toBeUndefined();
  });

  it("feeds the session's file lists: a changed file is listed as modified only", () => {
    const ops = createFileOps();
    extractFileOpsFromMessage(
      {
        role: "assistant",
        content: [
          { type: "toolCall", id: "1", name: "exec_command", arguments: { cmd: "cat notes.md" } },
          { type: "toolCall", id: "2", name: "apply_patch", arguments: { input: "*** Begin Patch\n*** Update File: notes.md\n*** End Patch" } },
          { type: "toolCall", id: "3", name: "exec_command", arguments: { cmd: "cat README.md" } },
        ],
      },
      ops,
    );
    expect(computeFileLists(ops)).toEqual({ readFiles: ["README.md"], modifiedFiles: ["notes.md"] });
  });
});
