import { describe, expect, it } from "vitest";
import {
  addFileOpsFromDetails,
  computeFileLists,
  createFileOps,
  extractFileOpsFromMessage,
  formatFileOps,
} from "./file-ops.js";
import { toolCall } from "./test-support.js";

describe("file operations", () => {
  it("records read, write and edit tool calls with a string path", () => {
    const ops = createFileOps();
    extractFileOpsFromMessage(
      {
        role: "assistant",
        content: [
          toolCall("1", "read", { path: "src/a.ts" }),
          toolCall("2", "write", { path: "src/b.ts", content: "x" }),
          toolCall("3", "edit", { path: "src/c.ts" }),
          toolCall("4", "bash", { path: "ignored.ts" }),
          toolCall("5", "read", { file: "no-path-arg.ts" }),
          toolCall("6", "read", { path: 42 }),
          toolCall("7", "toString", { path: "proto.ts" }),
        ],
      },
      ops,
    );
    expect([...ops.read]).toEqual(["src/a.ts"]);
    expect([...ops.written]).toEqual(["src/b.ts"]);
    expect([...ops.edited]).toEqual(["src/c.ts"]);
  });

  it("records Claude Code's file tools by their own arguments, not its search tools", () => {
    const ops = createFileOps();
    extractFileOpsFromMessage(
      {
        role: "assistant",
        content: [
          toolCall("1", "Read", { file_path: "/p/a.ts" }),
          toolCall("2", "Write", { file_path: "/p/b.ts", content: "x" }),
          toolCall("3", "Edit", { file_path: "/p/c.ts", old_string: "a", new_string: "b" }),
          toolCall("4", "MultiEdit", { file_path: "/p/d.ts", edits: [] }),
          toolCall("5", "NotebookEdit", { notebook_path: "/p/e.ipynb" }),
          toolCall("6", "Grep", { pattern: "x", path: "/p" }),
          toolCall("7", "Glob", { pattern: "**/*.ts", path: "/p" }),
          toolCall("8", "Read", { path: "/p/wrong-argument.ts" }),
        ],
      },
      ops,
    );
    expect([...ops.read]).toEqual(["/p/a.ts"]);
    expect([...ops.written]).toEqual(["/p/b.ts"]);
    expect([...ops.edited]).toEqual(["/p/c.ts", "/p/d.ts", "/p/e.ipynb"]);
  });

  it("ignores messages that are not assistant messages", () => {
    const ops = createFileOps();
    extractFileOpsFromMessage({ role: "user", content: "read path=x" }, ops);
    expect(computeFileLists(ops)).toEqual({ readFiles: [], modifiedFiles: [] });
  });

  it("lists a file that was read and modified as modified only, sorted", () => {
    const ops = createFileOps();
    ops.read.add("z.ts").add("b.ts").add("a.ts");
    ops.edited.add("b.ts");
    ops.written.add("y.ts");
    expect(computeFileLists(ops)).toEqual({ readFiles: ["a.ts", "z.ts"], modifiedFiles: ["b.ts", "y.ts"] });
  });

  it("carries over file lists from earlier details and ignores anything else", () => {
    const ops = createFileOps();
    addFileOpsFromDetails({ readFiles: ["r.ts", 3], modifiedFiles: ["m.ts"], other: true }, ops);
    addFileOpsFromDetails("not an object", ops);
    addFileOpsFromDetails(null, ops);
    expect(computeFileLists(ops)).toEqual({ readFiles: ["r.ts"], modifiedFiles: ["m.ts"] });
  });

  it("formats the sections like pi, omitting empty ones", () => {
    expect(formatFileOps({ readFiles: ["path/to/file1.ts", "path/to/file2.ts"], modifiedFiles: ["path/to/changed.ts"] })).toBe(
      "\n\n<read-files>\npath/to/file1.ts\npath/to/file2.ts\n</read-files>\n\n<modified-files>\npath/to/changed.ts\n</modified-files>",
    );
    expect(formatFileOps({ readFiles: [], modifiedFiles: ["m.ts"] })).toBe("\n\n<modified-files>\nm.ts\n</modified-files>");
    expect(formatFileOps({ readFiles: [], modifiedFiles: [] })).toBe("");
  });
});
