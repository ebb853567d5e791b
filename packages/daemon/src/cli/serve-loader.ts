/**
 * What `base-context serve` runs (bin/base-context.js requires its bundle, `dist/bundle/serve.cjs`):
 * the daemon's bundle beside it, compiled with V8's code cache (code-cache.ts). Only ever run as
 * that CommonJS bundle, where `require` is the bundle's own.
 */
import { serveBundle } from "./code-cache.js";

serveBundle(require.resolve("./daemon.cjs"), process.argv.slice(3));
