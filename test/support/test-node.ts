/**
 * The Node that runs the daemons and CLIs the tests start: the tests' own, or the release an extra
 * pass names (BASE_CONTEXT_TEST_NODE, set by vitest.config.ts; see test/support/other-node.ts).
 */
export const TEST_NODE: string = process.env.BASE_CONTEXT_TEST_NODE ?? process.execPath;

/**
 * What a child process started under TEST_NODE needs of this process's environment when a test
 * gives it an environment of its own: the extra passes' Node and SQLite addon (NODE_OPTIONS
 * preloads the addon's path, BASE_CONTEXT_REEXEC keeps the command on that Node). Empty in the
 * default pass.
 */
export function testNodeEnv(): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (key.startsWith("BASE_CONTEXT_TEST_") || key === "NODE_OPTIONS" || key === "BASE_CONTEXT_REEXEC") kept[key] = value;
  }
  return kept;
}

/** NODE_OPTIONS for a child: this process's (the extra passes' preload) plus `options`. */
export function withNodeOptions(options: string): string {
  return [process.env.NODE_OPTIONS, options].filter(Boolean).join(" ");
}
