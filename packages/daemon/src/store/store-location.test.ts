import { describe, expect, it } from "vitest";
import { redactStoreUrl, storeLocation, StoreOpenError, StoreUrlError } from "./store-location.js";

describe("storeLocation", () => {
  const url = "postgres://agent:pw@db.internal:5432/sessions";

  it("takes BASE_CONTEXT_STORE_URL first, then the user's store.url, then the SQLite file", () => {
    const env = { BASE_CONTEXT_HOME: "/home/u/.bc" };
    expect(storeLocation({ env, settingsUrl: "postgres://settings@h/db", path: "/x.db" })).toMatchObject({
      engine: "postgres",
      url: "postgres://settings@h/db",
    });
    expect(storeLocation({ env: { ...env, BASE_CONTEXT_STORE_URL: url }, settingsUrl: "postgres://settings@h/db" })).toEqual({
      engine: "postgres",
      url,
      display: "postgres://agent:***@db.internal:5432/sessions",
    });
    expect(storeLocation({ env: { ...env, BASE_CONTEXT_STORE_URL: "  " }, path: "/x.db" })).toEqual({ engine: "sqlite", path: "/x.db", display: "/x.db" });
    expect(storeLocation({ env })).toMatchObject({ engine: "sqlite", path: "/home/u/.bc/sessions.db" });
  });

  it("refuses what is not a postgres:// URL naming a server, without showing the password", () => {
    for (const bad of ["mysql://u:pw@h/db", "not a url :pw@", "postgres:///db", "sqlite:/tmp/x.db"]) {
      let error: unknown;
      try {
        storeLocation({ env: { BASE_CONTEXT_STORE_URL: bad } });
      } catch (caught) {
        error = caught;
      }
      expect(error, bad).toBeInstanceOf(StoreUrlError);
      expect((error as Error).message).toContain("BASE_CONTEXT_STORE_URL");
      expect((error as Error).message).not.toContain("pw@");
    }
    expect(storeLocation({ env: {}, settingsUrl: "postgresql://u@h/db" }).engine).toBe("postgres");
  });

  it("redacts the password in the URL and in its query, and in what a driver's message repeats", () => {
    expect(redactStoreUrl("postgres://u:s%40cret@h/db?password=other&sslmode=require")).toBe(
      "postgres://u:***@h/db?password=***&sslmode=require",
    );
    expect(redactStoreUrl("postgres://u@h/db")).toBe("postgres://u@h/db");
    expect(redactStoreUrl("postgres://u:sec ret@h/db")).not.toContain("sec");
    const location = storeLocation({ env: {}, settingsUrl: "postgres://u:s%40cret@h/db" });
    const error = new StoreOpenError(location, new Error("password authentication failed (s@cret) for postgres://u:s%40cret@h/db"));
    expect(error.message).toBe("cannot open the session store postgres://u:***@h/db: password authentication failed (***) for postgres://u:***@h/db");
  });
});
