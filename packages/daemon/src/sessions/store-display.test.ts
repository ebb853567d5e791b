import { describe, expect, it } from "vitest";
import { defaultSettings } from "../settings/index.js";
import { settingsForDisplay } from "./store-display.js";

describe("settingsForDisplay", () => {
  it("replaces store.url's password and keeps everything else", () => {
    const snapshot = { settings: { ...defaultSettings(), store: { url: "postgres://me:hunter2@db:5432/bc" } }, sources: { "store.url": "global" } };
    const shown = settingsForDisplay(snapshot);
    expect(shown.settings.store?.url).toBe("postgres://me:***@db:5432/bc");
    expect(shown.sources).toEqual(snapshot.sources);
    expect(snapshot.settings.store.url).toBe("postgres://me:hunter2@db:5432/bc");
  });

  it("leaves settings without a store URL as they are", () => {
    const snapshot = { settings: defaultSettings() };
    expect(settingsForDisplay(snapshot)).toBe(snapshot);
  });
});
