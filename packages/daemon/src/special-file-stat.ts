/**
 * `lstat` for paths that may be sockets or FIFOs, without breaking module loading afterwards.
 *
 * Why: Node's synchronous `fs.lstatSync`/`statSync` write their result into one buffer shared by
 * the whole thread, and `fs.realpathSync` — which the module loaders use, with a cache, to find
 * where a package really lives — reads that buffer back for path components it already knows:
 * if the last synchronous stat was of a socket or a FIFO, it stops resolving there and returns a
 * path with its symbolic links left in. Under pnpm's layout (packages are symlinks into
 * node_modules/.pnpm) a later `import("chokidar")` then looks for chokidar's own dependencies
 * next to the symlink and fails ("Cannot find package 'readdirp'"): in `serve --socket`, whose
 * last stat was of its own socket, the plugin host never started.
 *
 * The `bigint` form fills a different buffer, so the shared one keeps describing an ordinary file.
 * Use this for every stat of a path that may be a socket or a FIFO.
 */
import { lstatSync, type BigIntStats } from "node:fs";

export function lstatSpecialFile(path: string): BigIntStats {
  return lstatSync(path, { bigint: true });
}
