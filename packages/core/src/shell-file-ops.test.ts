import { describe, expect, it } from "vitest";
import { addFileOpsFromPrevious, createFileOps, computeFileLists, extractFileOpsFromMessage } from "./file-ops.js";
import { patchFileOps, shellCallFileOps } from "./shell-file-ops.js";

describe("file tracking of shell and patch calls", () => {
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

  it("tracks files any agent's shell places, moves and removes: cp, install, tee, touch, mv, git mv, rm, git rm", () => {
    expect(shellCallFileOps("Bash", { command: "sudo cp /tmp/dns.conf /etc/systemd/resolved.conf.d/dns.conf" })).toEqual({
      read: ["/tmp/dns.conf"],
      written: ["/etc/systemd/resolved.conf.d/dns.conf"],
      edited: [],
    });
    expect(shellCallFileOps("bash", { command: "cp ~/.git-templates/hooks/pre-commit .git/hooks/ && chmod +x .git/hooks/pre-commit" })?.written).toEqual([
      ".git/hooks/pre-commit",
    ]);
    expect(shellCallFileOps("Bash", { command: "install -m 644 -t /usr/local/share/app a.conf b.conf" })?.written).toEqual([
      "/usr/local/share/app/a.conf",
      "/usr/local/share/app/b.conf",
    ]);
    expect(shellCallFileOps("Bash", { command: "echo 'x' | sudo tee -a /etc/hosts >/dev/null; touch todo.txt" })?.written).toEqual([
      "/etc/hosts",
      "todo.txt",
    ]);
    expect(shellCallFileOps("Bash", { command: "git mv src/main-new.ts src/main.ts && mv todo.txt archive" })?.moved).toEqual([
      { from: "src/main-new.ts", to: "src/main.ts" },
      { from: "todo.txt", to: "archive/todo.txt" },
    ]);
    expect(shellCallFileOps("Bash", { command: "rm -f transcripts/.gitignore && git rm -r --cached old/" })?.removed).toEqual([
      "transcripts/.gitignore",
      "old/",
    ]);
    expect(shellCallFileOps("Bash", { command: 'dir /s /b "C:\\Program Files" 2>nul' })?.written).toEqual([]);
  });

  it("the file lists hold files where they are now: a moved file under its new name, a removed one gone", () => {
    const ops = createFileOps();
    const call = (id: string, name: string, args: Record<string, unknown>) => ({ type: "toolCall" as const, id, name, arguments: args });
    extractFileOpsFromMessage(
      {
        role: "assistant",
        content: [
          call("1", "Write", { file_path: "src/main-new.ts", content: "x" }),
          call("2", "Write", { file_path: "dist/a.js", content: "x" }),
          call("3", "Bash", { command: "mv src/main-new.ts src/main.ts && rm -rf dist" }),
        ],
      },
      ops,
    );
    expect(computeFileLists(ops)).toEqual({ readFiles: [], modifiedFiles: ["src/main.ts"] });
  });

  it("carries the files a previous summary names when it has no lists of its own (another agent's summary)", () => {
    const ops = createFileOps();
    const claudeCode = "Summary:\n3. Files and Code Sections:\n   - **`lib/app.ex`** — Added the supervisor\n   - **`mix.exs`**\n     - read for the deps\n";
    addFileOpsFromPrevious({ summary: claudeCode, details: { source: "claude-code" } }, ops);
    expect(computeFileLists(ops)).toEqual({ readFiles: ["mix.exs"], modifiedFiles: ["lib/app.ex"] });
    const ours = createFileOps();
    addFileOpsFromPrevious({ summary: "<modified-files>\nignored.ts\n</modified-files>", details: { readFiles: [], modifiedFiles: ["a.ts"] } }, ours);
    expect(computeFileLists(ours)).toEqual({ readFiles: [], modifiedFiles: ["a.ts"] });
  });
});
