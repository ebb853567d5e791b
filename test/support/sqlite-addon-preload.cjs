// Loaded with --require into daemons and CLIs the tests run under another Node release
// (test/support/other-node.ts): better-sqlite3's installed addon is built for the Node the
// workspace was installed with, so a process of the release named by BASE_CONTEXT_TEST_SQLITE_ABI
// loads the addon built for it instead. Any other process is left alone.
"use strict";
const addon = process.env.BASE_CONTEXT_TEST_SQLITE_ADDON;
if (addon && process.versions.modules === process.env.BASE_CONTEXT_TEST_SQLITE_ABI) {
  const dlopen = process.dlopen;
  process.dlopen = function (module, filename, ...rest) {
    return dlopen.call(this, module, /[\\/]better_sqlite3\.node$/.test(filename) ? addon : filename, ...rest);
  };
}
