/**
 * What `base-context claude-code hook` runs (bin/base-context.js requires its bundle,
 * `dist/bundle/hook.cjs`): the hook's bundle beside it, compiled with V8's code cache
 * (code-cache.ts). Only ever run as that CommonJS bundle, where `require` is the bundle's own.
 */
import { hookBundle } from "./code-cache.js";

hookBundle(require.resolve("./claude-code-hook.cjs"), process.argv.slice(3));
