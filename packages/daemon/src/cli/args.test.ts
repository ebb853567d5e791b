import { describe, expect, it } from "vitest";
import { choiceOption, commandHelp, integerOption, parseCommandArgs, UsageError, type CommandSpec } from "./args.js";

const SPEC: CommandSpec = {
  name: "demo",
  summary: "a command for the tests",
  arguments: [
    { name: "session", description: "which session" },
    { name: "query", description: "what to look for", optional: true },
  ],
  options: [
    { name: "limit", value: "n", description: "at most n" },
    { name: "format", value: "format", description: "native or openai-chat" },
    { name: "json", description: "JSON out" },
    { name: "output", short: "o", value: "file", description: "where to write" },
  ],
};

describe("parseCommandArgs", () => {
  it("reads arguments, flags, valued options and short names", () => {
    const args = parseCommandArgs(SPEC, ["abc", "--limit", "5", "--json", "-o", "out.jsonl", "needle"]);
    expect(args).toEqual({ arguments: ["abc", "needle"], options: { limit: "5", json: true, output: "out.jsonl" }, help: false });
    expect(integerOption(args, "limit", { min: 1, max: 10 })).toBe(5);
  });

  it("lets --help win over anything else, even unknown options", () => {
    expect(parseCommandArgs(SPEC, ["--nope", "-h"]).help).toBe(true);
    expect(parseCommandArgs(SPEC, ["--", "--help"]).help).toBe(false);
  });

  it("says what is wrong in a few words", () => {
    const problem = (argv: string[]) => {
      try {
        parseCommandArgs(SPEC, argv);
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        return (error as Error).message;
      }
      return "no error";
    };
    expect(problem([])).toBe("missing <session>");
    expect(problem(["a", "b", "c"])).toBe('unexpected argument "c"');
    expect(problem(["a", "--colour"])).toBe("unknown option --colour");
    expect(problem(["a", "--limit"])).toBe("--limit needs a value");
    expect(problem(["a", "--json=yes"])).toBe("--json does not take a value");
  });

  it("checks numbers and choices", () => {
    const args = parseCommandArgs(SPEC, ["a", "--limit", "0", "--format", "xml"]);
    expect(() => integerOption(args, "limit", { min: 1, max: 10 })).toThrow('--limit takes a whole number from 1 to 10, not "0"');
    expect(() => choiceOption(args, "format", ["native", "openai-chat"])).toThrow('--format must be one of native, openai-chat, not "xml"');
  });
});

describe("commandHelp", () => {
  it("lists the synopsis, arguments, options (with --help) and the exit status", () => {
    const help = commandHelp(SPEC);
    expect(help.split("\n")[0]).toBe("Usage: base-context demo <session> [query] [options]");
    expect(help).toMatch(/^ {2}-o, --output <file> +where to write$/m);
    expect(help).toMatch(/^ {6}--limit <n> +at most n$/m);
    expect(help).toMatch(/^ {2}-h, --help +show this help$/m);
    expect(help.trimEnd().split("\n").at(-1)).toBe("Exit status: 0 ok, 1 failure, 2 usage error.");
  });
});
