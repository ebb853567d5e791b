// A migrate run that stops for good in the middle of a session, for the tests of resuming one that
// was killed there: the built copy code (the CLI's) from <source> to <target>, frozen once
// <stopAfter> entries of session number <sessionIndex> are written, after printing "stuck" on
// stdout. The test then SIGKILLs it: what it leaves on the target is what a kill leaves.
//
//   node migrate-stuck.mjs <sqlite path> <target url> <sessionIndex> <stopAfter>
import { fileURLToPath } from "node:url";

const dist = new URL("../../packages/daemon/dist/", import.meta.url);
const { openEndpoint, parseEndpointUrl, sqliteEndpoint } = await import(new URL("cli/migrate-endpoints.js", dist).href);
const { migrateSessions } = await import(new URL("sessions/migrate.js", dist).href);

const [sourcePath, targetUrl, sessionIndex, stopAfter] = process.argv.slice(2);
const source = await openEndpoint(sqliteEndpoint(sourcePath));
const target = await openEndpoint(parseEndpointUrl("to", targetUrl));
let current = 0;
await migrateSessions(source, target, {
  pageSize: 1,
  onStart: (_id, index) => (current = index),
  onEntries: (_id, copied) => {
    if (current !== Number(sessionIndex) || copied < Number(stopAfter)) return;
    process.stdout.write("stuck\n");
    // Blocks this thread for good (no event loop turn, no cleanup) until the test kills it.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  },
});
process.stderr.write(`${fileURLToPath(import.meta.url)}: the run ended without reaching session ${sessionIndex}\n`);
process.exit(1);
