// Preloaded (NODE_OPTIONS=--require) into a daemon by test/bundle.e2e.test.ts: when the daemon logs
// that it is answering `initialize`, prints the Node built-in modules it has loaded by then
// ("builtins at reply: a b c" on stderr), so the test can check what its start path loaded.
"use strict";
const write = process.stderr.write.bind(process.stderr);
process.stderr.write = (chunk, ...rest) => {
  if (String(chunk).includes("start: answering initialize")) {
    const builtins = process.moduleLoadList.filter((name) => name.startsWith("NativeModule ")).map((name) => name.slice("NativeModule ".length));
    write(`builtins at reply: ${builtins.join(" ")}\n`);
  }
  return write(chunk, ...rest);
};
