/** text[] values in the binary format, read by a real PostgreSQL server (test/support/postgres.ts). */
import { describe, expect, it } from "vitest";
import { textArrayValue } from "./binary-arrays.js";
import { usePostgresDatabases } from "./test-support.js";
import { valuesSize } from "./worker/values-size.js";

const postgres = usePostgresDatabases();

const ROUND_TRIP = "SELECT CAST($1 AS TEXT[]) AS value, cardinality(CAST($1 AS TEXT[])) AS length";
const values = [
  "plain",
  'quotes " and \\ backslashes \\" {braces}, commas',
  "",
  null,
  "NULL",
  '{"type":"message","content":["a","b"],"n":null}',
  "ünïcödé 日本語 😀 \u00a0",
];

describe("textArrayValue", () => {
  it("reaches the server as the strings it was made of, NULLs and empty strings apart", async () => {
    const { db } = await postgres.open({ migrated: false });
    const read = db.query<{ value: (string | null)[]; length: number }>(ROUND_TRIP, [textArrayValue(values)]).rows[0]!;
    expect(read.value).toEqual(values);
    expect(read.length).toBe(values.length);
    expect(db.query(ROUND_TRIP, [textArrayValue([])]).rows[0]).toEqual({ value: [], length: 0 });
    expect(db.query(ROUND_TRIP, [textArrayValue([undefined, "x"])]).rows[0]).toEqual({ value: [null, "x"], length: 2 });
    // A lone surrogate has no UTF-8: it is stored as U+FFFD, as the driver's own strings are.
    expect(db.query(ROUND_TRIP, [textArrayValue(["a\ud800b"])]).rows[0]).toEqual({ value: ["a\ufffdb"], length: 1 });
  });

  it("is read the same in a transaction committed on this thread and in a large one committed by the worker", async () => {
    const { db } = await postgres.open({ migrated: false });
    const large = ["x".repeat(70 * 1024), ...values];
    for (const sentValues of [values, large]) {
      db.begin("read");
      const sent = db.send(ROUND_TRIP, [textArrayValue(sentValues)], undefined, true);
      await db.commitAsync();
      expect(sent.rows[0]).toEqual({ value: sentValues, length: sentValues.length });
    }
  });

  it("counts by its bytes in the size that decides which thread commits a transaction", () => {
    const value = textArrayValue(["x".repeat(100_000)]);
    expect(valuesSize([value])).toBeGreaterThan(100_000);
  });
});
