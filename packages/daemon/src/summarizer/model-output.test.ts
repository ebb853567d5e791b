import { describe, expect, it } from "vitest";
import { isReasoningModel, stripThinking } from "./model-output.js";

describe("isReasoningModel", () => {
  it("recognises o-series and gpt-5 models, with or without a provider prefix", () => {
    for (const model of ["o1", "o1-mini", "o3", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "openai/o3", "GPT-5.1"]) {
      expect(isReasoningModel(model), model).toBe(true);
    }
    for (const model of ["gpt-4o-mini", "gpt-4.1", "llama3.1", "omni-moderation", "qwen2.5:7b", "deepseek-r1"]) {
      expect(isReasoningModel(model), model).toBe(false);
    }
  });
});

describe("stripThinking", () => {
  it("removes complete reasoning blocks", () => {
    expect(stripThinking("<think>a\nb</think>\n## Goal\nx")).toBe("## Goal\nx");
    expect(stripThinking("<thinking>a</thinking>answer<think>b</think> more")).toBe("answer more");
  });
  it("drops everything before a lone closing tag (the template opened the block)", () => {
    expect(stripThinking("reasoning here</think>\n\n## Goal\nx")).toBe("## Goal\nx");
  });
  it("drops an unfinished block at the end", () => {
    expect(stripThinking("## Goal\nx\n<think>never closed")).toBe("## Goal\nx");
    expect(stripThinking("<think>only reasoning")).toBe("");
  });
  it("leaves ordinary text alone", () => {
    expect(stripThinking("  ## Goal\nthink about <b>tags</b>  ")).toBe("## Goal\nthink about <b>tags</b>");
  });
});
