// Preloaded (NODE_OPTIONS=--require) into a daemon by test/bundle.e2e.test.ts: when the daemon logs
// that it is answering `initialize`, and that it has loaded its code and built itself after the
// reply, prints the Node built-in modules it has loaded by then ("builtins at reply: a b c",
// "builtins when built: a b c" on stderr), so the test can check what its start path loaded.
"use strict";
const write = process.stderr.write.bind(process.stderr);
const builtins = () =>
  process.moduleLoadList.filter((name) => name.startsWith("NativeModule ")).map((name) => name.slice("NativeModule ".length));
process.stderr.write = (chunk, ...rest) => {
  const text = String(chunk);
  if (text.includes("start: answering initialize")) write(`builtins at reply: ${builtins().join(" ")}\n`);
  if (text.includes("start: daemon code loaded")) write(`builtins when built: ${builtins().join(" ")}\n`);
  return write(chunk, ...rest);
};
