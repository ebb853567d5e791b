import type { EntryInput } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { ENGINES, useTestStores } from "../store/test-support.js";
import { FakeCounter, sequentialIds } from "./fixtures/test-helpers.js";
import { SessionService, type SessionNews } from "./service.js";
import { SessionWatch } from "./session-watch.js";

const user = (text: string): EntryInput => ({ type: "message", message: { role: "user", content: text } });

describe.each(ENGINES)("session/watch on %s", (engine) => {
  const stores = useTestStores(engine);

  /** Two daemons on one database: `ours` watches, `theirs` stands for another process. */
  function twoDaemons() {
    const ours = stores.open({ ids: sequentialIds() });
    const theirs = stores.open({ ids: sequentialIds(Date.parse("2026-03-02T12:00:00.000Z")) });
    return {
      ours,
      theirs: new SessionService(theirs, new FakeCounter()),
      mine: new SessionService(ours, new FakeCounter()),
    };
  }

  it("sees what another process creates, appends, renames, moves and deletes, once each", async () => {
    const { ours, theirs } = twoDaemons();
    const { session } = await theirs.create({ cwd: "/p" });
    const watch = new SessionWatch(ours);
    watch.subscribe(() => undefined);
    expect(watch.poll()).toBeUndefined();

    const other = await theirs.create({ cwd: "/q" });
    expect(watch.poll()).toEqual({ changed: [other.session.id], deleted: [] });
    expect(watch.poll()).toBeUndefined();

    const appended = await theirs.append({ sessionId: session.id, entry: user("hello") });
    expect(watch.poll()).toEqual({ changed: [session.id], deleted: [] });
    await theirs.rename({ sessionId: session.id, name: "a name" });
    expect(watch.poll()).toEqual({ changed: [session.id], deleted: [] });
    await theirs.branch({ sessionId: session.id, entryId: appended.entry.id });
    expect(watch.poll()).toEqual({ changed: [session.id], deleted: [] });
    await theirs.delete({ sessionId: other.session.id });
    expect(watch.poll()).toEqual({ changed: [], deleted: [other.session.id] });
    expect(watch.poll()).toBeUndefined();
    watch.dispose();
  });

  it("sees this daemon's own writes too, and polls only while someone listens", async () => {
    const { ours, mine } = twoDaemons();
    const watch = new SessionWatch(ours);
    expect(watch.watching).toBe(false);
    const subscription = watch.subscribe(() => undefined);
    expect(watch.watching).toBe(true);
    const { session } = await mine.create({ cwd: "/p" });
    expect(watch.poll()).toEqual({ changed: [session.id], deleted: [] });
    subscription.dispose();
    expect(watch.watching).toBe(false);
  });

  it("tells each listener of SessionService.watch the summaries of what changed, newest first", async () => {
    const ours = stores.open({ ids: sequentialIds() });
    const mine = new SessionService(ours, new FakeCounter(), { watch: { intervalMs: 20 } });
    const { theirs } = twoDaemons();
    const news: SessionNews[] = [];
    const arrived = new Promise<void>((resolve) => {
      mine.watch((item) => {
        news.push(item);
        if (news.flatMap((n) => n.changed).length >= 2) resolve();
      });
    });
    const first = await theirs.create({ cwd: "/p", name: "first" });
    const second = await theirs.create({ cwd: "/p", name: "second" });
    await theirs.append({ sessionId: second.session.id, entry: user("the newest") });
    await arrived;
    const changed = news.flatMap((n) => n.changed);
    expect(new Set(changed.map((summary) => summary.id))).toEqual(new Set([first.session.id, second.session.id]));
    const last = changed.find((summary) => summary.id === second.session.id)!;
    expect(last).toMatchObject({ name: "second", cwd: "/p", entryCount: 1, firstMessage: "the newest" });
    mine.stopWatching();
  });
});
