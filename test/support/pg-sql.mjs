// Statements on a PostgreSQL database, for test code that must block (postgres.ts's *Sync
// functions): reads {"url", "sql", "params"} or {"url", "statements": [sql, …]} as JSON on stdin,
// prints the (last) statement's rows as JSON on stdout. `statements` run one after another, each
// on its own (CREATE and DROP DATABASE cannot share a transaction): one process for a batch.
// Exits 1 with the server's message on stderr when a statement fails (the rest are not run).
import { readFileSync } from "node:fs";
import pg from "pg";

// Counts come back as numbers, as JSON would have them.
pg.types.setTypeParser(pg.types.builtins.INT8, Number);

const { url, sql, params, statements } = JSON.parse(readFileSync(0, "utf8"));
const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
try {
  await client.connect();
  let result = { rows: [] };
  for (const text of statements ?? []) result = await client.query(text);
  if (sql !== undefined) result = await client.query(sql, params ?? []);
  // Several statements in one text give one result each: the rows are the last statement's.
  const last = Array.isArray(result) ? result[result.length - 1] : result;
  process.stdout.write(JSON.stringify(last.rows));
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await client.end().catch(() => {});
}
