import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stackLocation } from "../plugins/wire.js";
import { cliInvocation, fitWidth, runnableHint } from "./output.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

describe("cliInvocation", () => {
  const folders: string[] = [];
  afterEach(() => folders.splice(0).forEach((folder) => dirs.remove(folder)));

  it("is base-context when that is on the PATH, else node and the script's path from here", () => {
    const folder = dirs.make();
    folders.push(folder);
    const bin = join(folder, "bin");
    mkdirSync(bin);
    const clone = join(folder, "clone");
    const script = join(clone, "packages", "daemon", "dist", "cli", "main.js");
    expect(cliInvocation({ PATH: "/nonexistent" }, script, clone)).toBe("node packages/daemon/dist/cli/main.js");
    expect(cliInvocation({ PATH: "" }, script, join(folder, "elsewhere"))).toBe(`node ${script}`);
    writeFileSync(join(bin, "base-context"), "#!/bin/sh\n");
    chmodSync(join(bin, "base-context"), 0o755);
    expect(cliInvocation({ PATH: `/nonexistent:${bin}` }, script, clone)).toBe("base-context");
    expect(runnableHint("List them with: base-context sessions (see ~/.base-context/settings.json)", "node main.js")).toBe(
      "List them with: node main.js sessions (see ~/.base-context/settings.json)",
    );
  });

  it("sets the home and the database the command ran on, so a hint pasted into another shell finds the session", () => {
    const env = { PATH: "/nonexistent", BASE_CONTEXT_HOME: "/tmp/base-context-demo", BASE_CONTEXT_DB: "/srv/my db.sqlite" };
    const cli = cliInvocation(env, "/clone/packages/daemon/dist/cli/main.js", "/clone");
    expect(cli).toBe("BASE_CONTEXT_HOME=/tmp/base-context-demo BASE_CONTEXT_DB='/srv/my db.sqlite' node packages/daemon/dist/cli/main.js");
    expect(runnableHint("base-context show 5b0c --brief", cli)).toBe(`${cli} show 5b0c --brief`);
    expect(cliInvocation({ PATH: "/nonexistent", BASE_CONTEXT_HOME: "" }, "/clone/main.js", "/clone")).toBe("node main.js");
  });
});

describe("fitWidth", () => {
  it("cuts coloured lines too, counting only what shows", () => {
    const line = `\u001b[1m${"x".repeat(50)}\u001b[22m`;
    const cut = fitWidth(line, 10);
    expect(cut.replace(/\u001b\[[0-9;]*m/g, "")).toBe(`${"x".repeat(9)}…`);
  });
});

describe("stackLocation", () => {
  it("finds the first frame in the plugin's folder, as a path relative to it", () => {
    const stack = [
      "TypeError: no",
      "    at explode (file:///home/me/.base-context/plugins/boom/lib/util.mjs:2:9)",
      "    at Object.session_before_compact (file:///home/me/.base-context/plugins/boom/index.mjs:5:40)",
      "    at run (file:///opt/base-context/dist/plugins/worker/bootstrap.js:80:20)",
    ].join("\n");
    expect(stackLocation(stack, "/home/me/.base-context/plugins/boom")).toBe("lib/util.mjs:2:9");
    expect(stackLocation("Error: x\n    at /srv/p/index.js:1:2", "/srv/p/")).toBe("index.js:1:2");
    expect(stackLocation("Error: x\n    at node:internal/x:1:2", "/srv/p")).toBeUndefined();
    expect(stackLocation(undefined, "/srv/p")).toBeUndefined();
  });
});
