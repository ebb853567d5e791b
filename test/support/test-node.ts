/**
 * The Node that runs the daemons and CLIs the tests start: the tests' own, or the release an extra
 * pass names (BASE_CONTEXT_TEST_NODE, set by vitest.config.ts; see test/support/other-node.ts).
 */
export const TEST_NODE: string = process.env.BASE_CONTEXT_TEST_NODE ?? process.execPath;
