import { describe, expect, it } from "vitest";
import { z } from "zod";
import { notification, request } from "./declare.js";
import * as compaction from "./methods/compaction.js";
import * as context from "./methods/context.js";
import * as lifecycle from "./methods/lifecycle.js";
import * as model from "./methods/model.js";
import * as plugins from "./methods/plugins.js";
import * as sessions from "./methods/sessions.js";
import * as settings from "./methods/settings.js";
import * as summarize from "./methods/summarize.js";
import * as tree from "./methods/tree.js";

describe("request / notification", () => {
  it("takes schemas as they are", () => {
    const params = z.object({ n: z.number() });
    const result = z.null();
    const decl = request("test/plain", params, result);
    expect(decl.params).toBe(params);
    expect(decl.result).toBe(result);
    expect(Object.keys(decl)).toEqual(["kind", "method", "params", "result", "type"]);
  });

  it("makes a schema given as a function when it is first read, once", () => {
    let made = 0;
    const decl = request(
      "test/lazy",
      () => {
        made++;
        return z.object({ n: z.number().int() });
      },
      () => z.null(),
    );
    expect(made).toBe(0);
    const first = decl.params;
    expect(made).toBe(1);
    expect(decl.params).toBe(first);
    expect(made).toBe(1);
    expect(decl.params.safeParse({ n: 1.5 }).success).toBe(false);
    // Once made it is a plain property: spread and listed like a schema given as is.
    expect({ ...decl }.params).toBe(first);
    expect(Object.keys(decl)).toEqual(["kind", "method", "params", "result", "type"]);
  });

  it("makes a notification's schema on first read", () => {
    let made = 0;
    const decl = notification("test/note", () => {
      made++;
      return z.object({ text: z.string() });
    });
    expect(made).toBe(0);
    expect(decl.params.parse({ text: "hi" })).toEqual({ text: "hi" });
    expect(made).toBe(1);
  });
});

describe("the protocol's declarations", () => {
  // A daemon's start builds the schemas of the methods it serves, not of every method: loading a
  // method module must not build its declarations' schemas (docs/architecture.md#start-path-and-bundles).
  it("build no schema when their module is loaded", () => {
    const modules = { compaction, context, lifecycle, model, plugins, sessions, settings, summarize, tree };
    const built: string[] = [];
    let declarations = 0;
    for (const module of Object.values(modules)) {
      for (const value of Object.values(module)) {
        if (typeof value !== "object" || value === null || !("kind" in value) || !("method" in value)) continue;
        declarations++;
        for (const key of ["params", "result"]) {
          const descriptor = Object.getOwnPropertyDescriptor(value, key);
          if (descriptor !== undefined && descriptor.get === undefined) built.push(`${String(value.method)} ${key}`);
        }
      }
    }
    expect(declarations).toBeGreaterThan(40);
    expect(built).toEqual([]);
  });
});
