/**
 * vitest global setup of the postgres project: one PostgreSQL server for the whole run (each test
 * file makes its own databases on it, see engine.ts), stopped and removed when the run ends,
 * whether its tests passed or not.
 */
import type { TestProject } from "vitest/node";
import "./engine.js"; // declares the provided `postgresAdminUrl`
import { startPostgres } from "./postgres.js";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  project.provide("postgresAdminUrl", server.adminUrl);
  return () => server.stop();
}
