/** Types of postgres-programs.mjs (used by the TypeScript test support). */
export interface ServerPrograms {
  /** The folder holding initdb, pg_ctl and postgres. */
  bindir: string;
  /** "system", or the npm package they came from. */
  source: string;
}
export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
}
export function findServerPrograms(env?: NodeJS.ProcessEnv, candidates?: string[]): ServerPrograms;
export function serverUser(env?: NodeJS.ProcessEnv): ServerUser | undefined;
export function asServerUser(program: string, args: string[], user?: ServerUser): [string, string[]];
export function loadPg(): unknown;
