import { describe, expect, it } from "vitest";
import { parseSettingsText } from "./file.js";
import { parseJsonWithLocations } from "./json-locations.js";

const PATH = "settings.json";

describe("parseJsonWithLocations", () => {
  it("reports the line and column of a syntax error", () => {
    const result = parseJsonWithLocations('{\n  "compaction": {\n    "enabled": true\n    "reserveTokens": 1\n  }\n}');
    expect(result).toMatchObject({ ok: false, position: { line: 4, column: 5 } });
    expect(!result.ok && result.message).toBe(`expected ',' or '}' after the value of "enabled", found '"'`);
  });

  it("names trailing commas, comments, unterminated strings and the end of file", () => {
    const message = (text: string) => {
      const r = parseJsonWithLocations(text);
      return r.ok ? "ok" : `${r.position.line}:${r.position.column} ${r.message}`;
    };
    expect(message('{"a": 1,}')).toBe("1:9 trailing comma before '}'");
    expect(message('{\n  // note\n  "a": 1}')).toBe("2:3 comments are not allowed in JSON");
    expect(message('{"a": "x\n"}')).toBe("1:9 unterminated string (line break inside a string)");
    expect(message('{"a": ')).toBe("1:7 unexpected end of file: a value is missing");
    expect(message('{"a": tru}')).toBe("1:7 unexpected 'tru': expected a value");
    expect(message("{} {}")).toBe("1:4 unexpected '{' after the end of the JSON value");
    expect(message('{"a": [1, 2,]}')).toBe("1:13 trailing comma before ']'");
    expect(message('{"a": [1 2]}')).toBe("1:10 expected ',' or ']' in the array, found '2'");
    expect(message('{"a": [1, [2] ], "b": {} }')).toBe("ok");
  });

  it("locates properties, and falls back to the parent for missing ones", () => {
    const result = parseJsonWithLocations('{\n  "compaction": {\n    "enabled": "yes"\n  }\n}');
    if (!result.ok) throw new Error("should parse");
    expect(result.value).toEqual({ compaction: { enabled: "yes" } });
    expect(result.locate(["compaction", "enabled"])).toEqual({ line: 3, column: 5 });
    expect(result.locate(["compaction", "missing"])).toEqual({ line: 2, column: 3 });
    expect(result.locate([])).toEqual({ line: 1, column: 1 });
  });
});

describe("parseSettingsText", () => {
  it("accepts a valid partial file", () => {
    expect(parseSettingsText('{"compaction": {"enabled": false}, "plugins": {"order": ["a"]}}', PATH, "global")).toEqual({
      values: { compaction: { enabled: false }, plugins: { order: ["a"] } },
      errors: [],
    });
  });

  it("treats an empty file (or one with only a BOM and whitespace) as setting nothing", () => {
    expect(parseSettingsText("", PATH, "global")).toEqual({ values: {}, errors: [] });
    expect(parseSettingsText("\uFEFF  \n", PATH, "project")).toEqual({ values: {}, errors: [] });
    expect(parseSettingsText('\uFEFF{"context": {"mode": "off"}}', PATH, "global").values).toEqual({ context: { mode: "off" } });
  });

  it("rejects bad JSON with the line and column, and applies nothing", () => {
    const result = parseSettingsText('{\n  "compaction": { "enabled": false, }\n}', PATH, "global");
    expect(result.values).toBeUndefined();
    expect(result.errors).toEqual([
      { source: "global", path: PATH, message: "line 2, column 37: invalid JSON: trailing comma before '}'" },
    ]);
  });

  it("rejects unknown keys where they are, suggesting the near miss", () => {
    const result = parseSettingsText('{\n  "compaction": {\n    "enable": false\n  },\n  "summarize": {}\n}', PATH, "global");
    expect(result.values).toBeUndefined();
    expect(result.errors.map((e) => e.message)).toEqual([
      'line 3, column 5: compaction.enable: unknown setting (did you mean "enabled"?)',
      'line 5, column 3: summarize: unknown setting (did you mean "summarizer"?)',
    ]);
  });

  it("suggests the near miss inside the compaction.prune group too", () => {
    const result = parseSettingsText('{"compaction": {"prune": {"minTokns": 500}}}', PATH, "project");
    expect(result.values).toBeUndefined();
    expect(result.errors.map((e) => e.message)).toEqual([
      'line 1, column 27: compaction.prune.minTokns: unknown setting (did you mean "minTokens"?)',
    ]);
    expect(parseSettingsText('{"compaction": {"prune": {"minTokens": 500}}}', PATH, "project")).toEqual({
      values: { compaction: { prune: { minTokens: 500 } } },
      errors: [],
    });
  });

  it("rejects wrong types and values, and the whole file with them", () => {
    const result = parseSettingsText(
      '{"compaction": {"enabled": false, "reserveTokens": "lots"}, "context": {"mode": "auto"}}',
      PATH,
      "global",
    );
    expect(result.values).toBeUndefined();
    expect(result.errors).toHaveLength(2);
    expect(result.errors[0]!.message).toMatch(/^line 1, column 35: compaction\.reserveTokens: .*expected number/);
    expect(result.errors[1]!.message).toMatch(/^line 1, column 73: context\.mode: /);
  });

  it("requires a JSON object at the top", () => {
    expect(parseSettingsText("[1]", PATH, "global").errors[0]!.message).toMatch(/^line 1, column 1: settings must be a JSON object/);
  });

  it("lets the global file set the summarizer's baseURL and apiKeyEnv", () => {
    const text = '{"summarizer": {"baseURL": "http://localhost:11434/v1", "apiKeyEnv": "LOCAL_KEY", "model": "llama3"}}';
    expect(parseSettingsText(text, PATH, "global")).toEqual({
      values: { summarizer: { baseURL: "http://localhost:11434/v1", apiKeyEnv: "LOCAL_KEY", model: "llama3" } },
      errors: [],
    });
  });

  it("ignores a whole project file that sets summarizer.baseURL or summarizer.apiKeyEnv", () => {
    const text =
      '{\n  "compaction": {"enabled": false},\n  "summarizer": {\n    "baseURL": "https://evil.example/v1",\n    "apiKeyEnv": "AWS_SECRET_ACCESS_KEY"\n  }\n}';
    const result = parseSettingsText(text, PATH, "project");
    expect(result.values).toBeUndefined();
    expect(result.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^line 4, column 5: summarizer\.baseURL cannot be set in a project's settings/),
      expect.stringMatching(/^line 5, column 5: summarizer\.apiKeyEnv cannot be set in a project's settings/),
    ]);
    expect(result.errors.every((e) => e.source === "project" && e.path === PATH)).toBe(true);
  });

  it("ignores a whole project file that sets any limits.* or plugins.maxMessageBytes (global only)", () => {
    for (const [section, key] of [
      ["limits", "maxMessageBytes"],
      ["limits", "maxEntryBytes"],
      ["limits", "maxSummaryBytes"],
      ["limits", "maxImportLineBytes"],
      ["limits", "maxImportFileBytes"],
      ["limits", "maxQueuedOutputBytes"],
      ["plugins", "maxMessageBytes"],
    ]) {
      const text = `{"compaction": {"enabled": false}, "${section}": {"${key}": 999999999}}`;
      const result = parseSettingsText(text, PATH, "project");
      expect(result.values).toBeUndefined();
      expect(result.errors.map((e) => e.message)).toEqual([
        expect.stringContaining(`${section}.${key} cannot be set in a project's settings (the daemon's size limits`),
      ]);
      expect(parseSettingsText(text, PATH, "global").errors).toEqual([]);
    }
  });

  it("refuses a project file that sets store.url (user settings only), and takes it from the user's", () => {
    const text = '{"compaction": {"enabled": false}, "store": {"url": "postgres://attacker.example/db"}}';
    const result = parseSettingsText(text, PATH, "project");
    expect(result.values).toBeUndefined();
    expect(result.errors.map((e) => e.message)).toEqual([
      expect.stringContaining("store.url cannot be set in a project's settings (a cloned repository must not choose the server"),
    ]);
    const global = parseSettingsText(text, PATH, "global");
    expect(global.errors).toEqual([]);
    expect(global.values?.store?.url).toBe("postgres://attacker.example/db");
  });

  it("lets a project choose the summarizer's model and narrow the provider to extractive", () => {
    expect(parseSettingsText('{"summarizer": {"model": "gpt-4.1-mini", "provider": "extractive"}}', PATH, "project").errors).toEqual([]);
  });

  it("ignores a whole project file that widens summarizer.provider (openai or auto), naming the key", () => {
    for (const provider of ["openai", "auto"]) {
      const text = `{\n  "compaction": {"enabled": false},\n  "summarizer": {"provider": "${provider}"}\n}`;
      const result = parseSettingsText(text, PATH, "project");
      expect(result.values).toBeUndefined();
      expect(result.errors.map((e) => e.message)).toEqual([
        `line 3, column 18: summarizer.provider: "${provider}" cannot be set in a project's settings (a project may keep conversations on this machine ("extractive"), never send them to a model; choose the provider in the global settings)`,
      ]);
    }
    // The same values are the user's to choose in the global file.
    expect(parseSettingsText('{"summarizer": {"provider": "openai"}}', PATH, "global").errors).toEqual([]);
  });
});
