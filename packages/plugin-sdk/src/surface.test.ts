import { describe, expect, it } from "vitest";
import * as shim from "../../daemon/src/plugins/worker/sdk-shim.js";
import * as sdk from "./index.js";

/** Exports that exist only for tests, not inside the daemon. */
const HARNESS_ONLY = ["PluginHookError", "runHook", "SessionFixture", "sessionFixture", "testSettings"];

describe("the SDK's runtime surface", () => {
  it("matches what the daemon gives plugins for @base-context/plugin-sdk (minus the test harness)", () => {
    const sdkNames = Object.keys(sdk).filter((name) => !HARNESS_ONLY.includes(name)).sort();
    expect(sdkNames).toEqual(Object.keys(shim).sort());
  });
});
