// Loaded with --require into a daemon or CLI a test runs: loading better-sqlite3's native addon
// fails as it does when the addon was built for another Node ABI (installed under one Node, run
// under another), with Node's own error for it. The addon itself is never loaded.
"use strict";
const dlopen = process.dlopen;
process.dlopen = function (module, filename, ...rest) {
  if (!/[\\/]better_sqlite3\.node$/.test(filename)) return dlopen.call(this, module, filename, ...rest);
  const built = process.versions.modules === "115" ? "137" : "115";
  const error = new Error(
    `The module '${filename}'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION ${built}. ` +
      `This version of Node.js requires\nNODE_MODULE_VERSION ${process.versions.modules}. Please try re-compiling or re-installing\n` +
      "the module (for instance, using `npm rebuild` or `npm install`).",
  );
  error.code = "ERR_DLOPEN_FAILED";
  throw error;
};
