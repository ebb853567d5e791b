/**
 * session/watch over stdio: an editor's daemon hears of the sessions another process writes to the
 * same store (here a second daemon on the same home, as an agent's own daemon would be), without
 * asking again, and stops hearing once it says so.
 */
import {
  EntryAppend,
  SessionCreate,
  SessionDelete,
  SessionDidChange,
  SessionImport,
  SessionRename,
  SessionWatch,
  type ValidParamsOf,
} from "@base-context/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixture, rpcError, user } from "./fixtures/e2e.js";
import { startDaemon, type TestDaemon } from "./support/daemon.js";

type News = ValidParamsOf<typeof SessionDidChange>;

let editor: TestDaemon;
let agent: TestDaemon;
const news: News[] = [];
let waiters: { until: (all: News[]) => boolean; resolve: () => void }[] = [];

beforeAll(async () => {
  editor = await startDaemon();
  agent = await startDaemon({ home: editor.home });
  editor.client.onNotification(SessionDidChange, (params) => {
    news.push(params);
    const ready = waiters.filter((waiter) => waiter.until(news));
    waiters = waiters.filter((waiter) => !ready.includes(waiter));
    for (const waiter of ready) waiter.resolve();
  });
});
afterAll(async () => {
  await agent.close();
  await editor.close();
});

/** Waits until the news so far satisfy `until` (the daemon polls about once a second). */
function newsUntil(until: (all: News[]) => boolean): Promise<void> {
  if (until(news)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no such session/didChange within 10 s; got ${JSON.stringify(news)}`)), 10_000);
    waiters.push({
      until,
      resolve: () => {
        clearTimeout(timer);
        resolve();
      },
    });
  });
}
const changedIds = (all: News[]) => all.flatMap((n) => n.changed.map((s) => s.id));

describe("session/watch", () => {
  it("tells the watching client what another daemon on the same store creates, imports, appends, renames and deletes", async () => {
    expect(await editor.client.request(SessionWatch, {})).toEqual({});
    const { session } = await agent.client.request(SessionCreate, { cwd: "/home/me/agent" });
    await newsUntil((all) => changedIds(all).includes(session.id));

    const imported = await agent.client.request(SessionImport, { path: fixture("pi-v3.jsonl"), newId: true });
    await newsUntil((all) => all.some((n) => n.changed.some((s) => s.id === imported.session.id && s.entryCount === imported.entryCount)));

    await agent.client.request(EntryAppend, { sessionId: session.id, entry: user("the agent goes on") });
    await agent.client.request(SessionRename, { sessionId: session.id, name: "Named by the agent" });
    await newsUntil((all) => all.some((n) => n.changed.some((s) => s.id === session.id && s.name === "Named by the agent")));
    const summary = news.flatMap((n) => n.changed).findLast((s) => s.id === session.id)!;
    expect(summary).toMatchObject({ cwd: "/home/me/agent", entryCount: 2, firstMessage: "the agent goes on" });

    await agent.client.request(SessionDelete, { sessionId: imported.session.id });
    await newsUntil((all) => all.some((n) => n.deleted.includes(imported.session.id)));
  });

  it("stops with enabled: false, and starts again from the store as it is then", async () => {
    await editor.client.request(SessionWatch, { enabled: false });
    const heard = news.length;
    const quiet = await agent.client.request(SessionCreate, { cwd: "/home/me/quiet" });
    await editor.client.request(SessionWatch, { enabled: true });
    const after = await agent.client.request(SessionCreate, { cwd: "/home/me/after" });
    // Had the watch gone on, the quiet session would have come first, or with this one.
    await newsUntil((all) => changedIds(all.slice(heard)).includes(after.session.id));
    expect(changedIds(news.slice(heard))).not.toContain(quiet.session.id);
  });

  it("refuses params of the wrong type", async () => {
    const error = await rpcError(editor.client.request(SessionWatch, { enabled: "yes" } as never));
    expect(error.data?.code).toBe("invalid_params");
  });
});
