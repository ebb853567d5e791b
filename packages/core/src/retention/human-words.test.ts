/**
 * The human's words that reach the agent as a tool's result (docs/retention.md "The human's
 * words, wherever they are"), and the commands that only look (lookups.ts).
 */
import { describe, expect, it } from "vitest";
import { callMessage, resultMessage } from "../test-support.js";
import { humanWordsInResult } from "./human-words.js";
import { isLookupCommand } from "./lookups.js";
import { probeMessages } from "./probes.js";

const call = (id: string, name: string, args: Record<string, unknown>) => callMessage([id, name, args]);
const result = resultMessage;
const REFUSED =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file).";

describe("the human's words in a tool's result", () => {
  it("reads the answers to the agent's questions, each question with its answer", () => {
    const text =
      'User has answered your questions: "Which database?"="PostgreSQL", "Public or private?"="Private, and \\"internal\\" only". ' +
      "You can now continue with the user's answers in mind.";
    expect(humanWordsInResult("AskUserQuestion", text)).toEqual({
      typed: [],
      answers: [
        { question: "Which database?", answer: "PostgreSQL" },
        { question: "Public or private?", answer: 'Private, and "internal" only' },
      ],
      refused: false,
    });
  });

  it("reads what the user typed when refusing a call, and never the harness's notice in its place", () => {
    expect(humanWordsInResult("Bash", `${REFUSED} To tell you how to proceed, the user said:\nuse pnpm, never npm`)).toEqual({
      typed: ["use pnpm, never npm"],
      answers: [],
      refused: true,
    });
    expect(humanWordsInResult("Bash", `${REFUSED} STOP what you are doing and wait for the user to tell you how to proceed.`)?.typed).toEqual([]);
    const clarify = `${REFUSED} To tell you how to proceed, the user said:\nThe user wants to clarify these questions.\n    Start by asking them.`;
    expect(humanWordsInResult("AskUserQuestion", clarify)?.typed).toEqual([]);
    expect(humanWordsInResult("Bash", "total 8\ndrwxr-xr-x  2 me me 4096 .")).toBeUndefined();
  });

  it("the probes read them as the user's: a typed reason's requests and rules, an answer that asks for work", () => {
    const probes = probeMessages([
      call("a", "Bash", { command: "npm install" }),
      result("a", "Bash", `${REFUSED} To tell you how to proceed, the user said:\nuse pnpm instead. Never run npm in this repo.`, true),
      call("b", "AskUserQuestion", { questions: [] }),
      result("b", "AskUserQuestion", 'User has answered your questions: "Was main clean?"="main was clean; fix the issues".'),
    ]);
    expect(probes.requests.map((r) => r.text)).toEqual(["use pnpm instead. Never run npm in this repo.", "main was clean; fix the issues"]);
    expect(probes.constraints.map((c) => c.text)).toEqual(["Never run npm in this repo."]);
    // An answer is the user's choice, not a rule the probe is sure of: seen, not counted (repair never adds it).
    expect(probes.unjudged?.constraints).toBe(1);
  });
});

describe("commands that only look", () => {
  it.each([
    "whoami /priv",
    "cd app && git status --short",
    "git log --oneline -5 | head -3",
    "systemctl status nginx",
    'powershell.exe -Command "Get-Service x | Where-Object Status -eq Running | Select-Object Name"',
    'cmd /c "dir C:\\Users /b"',
    "net user alice",
    'powershell -Command "Get-Process | Select-Object Id,@{Name=\'User\';Expression={$_.Id}}"',
  ])("looks: %s", (command) => expect(isLookupCommand(command)).toBe(true));

  it.each([
    "git push",
    "npm test",
    "mix test test/a_test.exs",
    'powershell.exe -Command "Stop-Service x"',
    'powershell.exe -Command "Get-WmiObject Win32_NetworkAdapterConfiguration | ForEach-Object { $_.SetTcpipNetbios(2) }"',
    "net user alice secret /add",
    "rm -rf dist",
    "python3 build.py",
  ])("changes or runs something: %s", (command) => expect(isLookupCommand(command)).toBe(false));
});
