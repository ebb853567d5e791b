import { describe, expect, it } from "vitest";
import { bindParameters } from "./pg-statements.js";
import { rewritePlaceholders } from "./placeholders.js";

describe("rewritePlaceholders", () => {
  it("numbers positional ? in order", () => {
    const sql = rewritePlaceholders("SELECT * FROM entries WHERE session_id = ? AND seq > ? LIMIT ?");
    expect(sql.text).toBe("SELECT * FROM entries WHERE session_id = $1 AND seq > $2 LIMIT $3");
    expect(sql.sources).toEqual([0, 1, 2]);
    expect(sql.positionalCount).toBe(3);
    expect(sql.names).toEqual([]);
  });

  it("gives each @name one number, reused wherever the name appears", () => {
    const sql = rewritePlaceholders("UPDATE s SET leaf=@leaf, modified=@now WHERE id=@id AND leaf IS NOT @leaf");
    expect(sql.text).toBe("UPDATE s SET leaf=$1, modified=$2 WHERE id=$3 AND leaf IS NOT $1");
    expect(sql.sources).toEqual(["leaf", "now", "id"]);
    expect(sql.names).toEqual(["leaf", "now", "id"]);
  });

  it("numbers mixed ? and @name by position", () => {
    const sql = rewritePlaceholders("INSERT INTO t (a, b, c) VALUES (?, @b, ?)");
    expect(sql.text).toBe("INSERT INTO t (a, b, c) VALUES ($1, $2, $3)");
    expect(sql.sources).toEqual([0, "b", 1]);
  });

  it("leaves string literals, quoted identifiers and comments alone", () => {
    const text = `SELECT 'what? @you' AS "is it?", E'it\\'s ? @x' AS e, 'it''s ?' -- a ? comment @x
      /* outer ? /* nested @x */ still ? */ FROM t WHERE a = ?`;
    const sql = rewritePlaceholders(text);
    expect(sql.text).toBe(text.replace(/= \?$/, "= $1"));
    expect(sql.sources).toEqual([0]);
  });

  it("leaves dollar-quoted strings alone, but not identifiers that contain $", () => {
    const text = "SELECT $$ ? @a $$, $fn$ it's ? $fn$, foo$bar FROM t WHERE x = ?";
    const sql = rewritePlaceholders(text);
    expect(sql.text).toBe("SELECT $$ ? @a $$, $fn$ it's ? $fn$, foo$bar FROM t WHERE x = $1");
  });

  it("keeps casts, and PostgreSQL's @ operators", () => {
    const sql = rewritePlaceholders("SELECT ?::int8, @n::text, tsv @@ to_tsquery(@q), a @> b, a <@ b, a@@b FROM t");
    expect(sql.text).toBe("SELECT $1::int8, $2::text, tsv @@ to_tsquery($3), a @> b, a <@ b, a@@b FROM t");
    expect(sql.sources).toEqual([0, "n", "q"]);
  });

  it("leaves PostgreSQL's own $n and text without placeholders unchanged", () => {
    expect(rewritePlaceholders("SELECT $1 + 1").text).toBe("SELECT $1 + 1");
    expect(rewritePlaceholders("SELECT 1").sources).toEqual([]);
  });

  it("does not run past an unterminated literal", () => {
    expect(rewritePlaceholders("SELECT 'open ?").text).toBe("SELECT 'open ?");
  });
});

describe("bindParameters", () => {
  const positional = rewritePlaceholders("SELECT ?, ?");
  const named = rewritePlaceholders("SELECT @a, ?, @b, @a");

  it("orders positional values and named values as the $n numbers need", () => {
    expect(bindParameters(positional, ["x", 2])).toEqual(["x", 2]);
    expect(bindParameters(named, [{ a: 1, b: "two" }, "p"])).toEqual([1, "p", "two"]);
    expect(bindParameters(named, ["p", { b: null, a: 1 }])).toEqual([1, "p", null]);
  });

  it("passes undefined as NULL", () => {
    expect(bindParameters(positional, [undefined, null])).toEqual([null, null]);
  });

  it("refuses too few or too many values, and a missing name", () => {
    expect(() => bindParameters(positional, ["x"])).toThrow(/takes 2 positional parameter\(s\), 1 were given/);
    expect(() => bindParameters(positional, ["x", 1, 2])).toThrow(RangeError);
    expect(() => bindParameters(named, [{ a: 1 }, "p"])).toThrow(/missing named parameter "b"/);
    expect(() => bindParameters(named, ["p"])).toThrow(/pass an object/);
  });

  it("takes an object as a positional value when the statement has no names (e.g. a Date)", () => {
    const date = new Date(0);
    expect(bindParameters(rewritePlaceholders("SELECT ?"), [date])).toEqual([date]);
  });
});
