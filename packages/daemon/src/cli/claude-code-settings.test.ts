import { describe, expect, it } from "vitest";
import { installedHooks, isOurCommand, withoutOurHooks, withOurHooks } from "./claude-code-settings.js";

const OURS = "/usr/bin/node '/opt/my tools/base-context/bin/base-context.js' claude-code hook";

describe("Base Context's entries in Claude Code's settings", () => {
  it("recognises its command by how it ends, in every form install writes or a user types", () => {
    expect(isOurCommand(OURS)).toBe(true);
    expect(isOurCommand("base-context claude-code hook")).toBe(true);
    expect(isOurCommand("/usr/bin/node /srv/bc/packages/daemon/bin/base-context.js claude-code hook")).toBe(true);
    expect(isOurCommand("my-base-context claude-code hook")).toBe(false);
    expect(isOurCommand("base-context claude-code hook --other")).toBe(false);
    expect(isOurCommand("echo base-context claude-code hooks")).toBe(false);
    expect(isOurCommand(42)).toBe(false);
  });

  it("adds its entries after the others of the same event, keeps a group it shares with another hook, and removes only its own", () => {
    const shared = { matcher: "compact", hooks: [{ type: "command", command: "notify" }, { type: "command", command: OURS }] };
    const settings = { env: { A: "1" }, hooks: { SessionStart: [shared, "not a group"], Stop: [{ hooks: [{ type: "command", command: "x" }] }] } };
    const installed = withOurHooks(settings, "base-context claude-code hook");
    // The earlier command of ours in the shared group is replaced by one entry of its own.
    expect(installed.hooks).toEqual({
      SessionStart: [
        { matcher: "compact", hooks: [{ type: "command", command: "notify" }] },
        "not a group",
        { matcher: "compact", hooks: [{ type: "command", command: "base-context claude-code hook", timeout: 30 }] },
      ],
      Stop: settings.hooks.Stop,
      PreCompact: [{ hooks: [{ type: "command", command: "base-context claude-code hook", timeout: 30 }] }],
      PostCompact: [{ hooks: [{ type: "command", command: "base-context claude-code hook", timeout: 30 }] }],
    });
    expect(installedHooks(installed).map((hook) => hook.event)).toEqual(["PreCompact", "SessionStart", "PostCompact"]);
    const removed = withoutOurHooks(installed);
    expect(removed).toEqual({
      env: { A: "1" },
      hooks: {
        SessionStart: [{ matcher: "compact", hooks: [{ type: "command", command: "notify" }] }, "not a group"],
        Stop: settings.hooks.Stop,
      },
    });
    expect(withoutOurHooks({ hooks: { PreCompact: [{ hooks: [{ command: OURS }] }] } })).toEqual({});
    expect(withoutOurHooks({ model: "x" })).toEqual({ model: "x" });
  });
});
