/**
 * Runs the daemon's CommonJS bundle with V8's code cache (docs/architecture.md#start-path-and-bundles).
 *
 * Compiling the bundle is a large part of a daemon's start. V8 can skip it: `script.createCachedData()`
 * serialises the compiled code (every function compiled so far, so made after the start it should
 * speed up), and a later `new vm.Script(source, { cachedData })` deserialises it instead of
 * parsing. Node 20 offers nothing of the kind for ES modules, hence the daemon's CommonJS bundle.
 *
 * A cache must never break a start, nor run code other than the bundle's. V8 checks its own
 * version and flags and the source's length, not the source itself nor the data's integrity (its
 * checksum is verified in debug builds only), so the file carries its own check: the CRC-32 of the
 * bundle's bytes and that of the data (zlib's: node:crypto, for a hash, would be loaded before the
 * `initialize` reply; bench/results/startup.md). They guard against a rebuilt
 * bundle and a damaged file, not against someone who can write either: that one could change the
 * bundle itself. A cache that is missing, unreadable, for another bundle or Node, truncated or
 * damaged is ignored (the bundle is compiled from source) and written again.
 *
 * Where: beside the bundle when its folder is writable, else in the user's cache folder
 * (`$XDG_CACHE_HOME/base-context`, `~/.cache/base-context` by default), one file per bundle path,
 * Node version and architecture. Written atomically (a temporary file renamed), so daemons starting
 * together never read half a file. `BASE_CONTEXT_CODE_CACHE=off` runs without one.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import vm from "node:vm";
import { crc32 } from "node:zlib";
import { log } from "../log.js";

/** Version 2: CRC-32 checks (version 1 had SHA-1s). */
const MAGIC = "base-context v8 code cache 2\n";

/** What became of the cache at this start. */
export type CodeCacheState =
  /** Found and used: the bundle was not compiled. */
  | "used"
  /** None yet (first start of this bundle on this Node). */
  | "absent"
  /** Found but not usable (another bundle or Node, damaged, refused by V8): compiled from source. */
  | "stale"
  /** Turned off (BASE_CONTEXT_CODE_CACHE=off). */
  | "off";

/**
 * What the code in a cache was compiled for: the daemon's start only (it answered `initialize`,
 * loaded its parts and opened the database, then stopped or waited), or also requests it served
 * (building context, writing a large answer: code a start never runs). A cache written as such a
 * first daemon stopped covers its start only; the first daemon that runs from it and serves
 * requests writes it again, once, with their code too (docs/architecture.md#start-path-and-bundles).
 */
export type CacheCoverage = "start" | "requests";

export interface LoadedBundle {
  /** The bundle's `module.exports`. */
  exports: Record<string, unknown>;
  state: CodeCacheState;
  /** Why a cache found was not used, for the debug log. */
  reason?: string;
  /** What the cache used covers (a cache written before coverage was recorded covers the start). */
  covers?: CacheCoverage;
  /**
   * Writes the cache of what has been compiled so far, covering `covers`: when no usable cache was
   * found and none written yet, or when `covers` is "requests" and neither the cache used nor one
   * this process wrote covered them. So a process writes at most twice, and a cache covering
   * requests is never written again. Call it once the code worth caching has run, never on a
   * request's path. Never throws: says what happened, if anything.
   */
  save(covers: CacheCoverage): string | undefined;
}

interface CacheHeader {
  node: string;
  arch: string;
  v8: string;
  bundle: string;
  /** CRC-32 of the bundle's bytes and CRC-32 of the cached data, hex, joined by "-". */
  crc32: string;
  /** Missing in caches written before it was recorded: they cover the start. */
  covers?: CacheCoverage;
}

/** The files the cache of `bundlePath` may be in, in the order they are read and tried for writing. */
export function cacheFiles(bundlePath: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const tag = `${process.version}-${process.arch}`;
  const beside = join(dirname(bundlePath), `${basename(bundlePath)}.${tag}.v8cache`);
  const userCache = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.length > 0 ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  const pathKey = hex(crc32(bundlePath));
  return [beside, join(userCache, "base-context", `${basename(bundlePath)}-${pathKey}.${tag}.v8cache`)];
}

const hex = (crc: number): string => crc.toString(16).padStart(8, "0");

function checksum(source: Buffer, data: Uint8Array): string {
  return `${hex(crc32(source))}-${hex(crc32(data))}`;
}

function expectedHeader(bundlePath: string, source: Buffer, data: Uint8Array): CacheHeader {
  return { node: process.version, arch: process.arch, v8: process.versions.v8, bundle: bundlePath, crc32: checksum(source, data) };
}

/** The cached data in `file` if it is the cache of exactly this bundle on this Node, else why not. */
export function readCache(
  file: string,
  bundlePath: string,
  source: Buffer,
): { data: Buffer; covers: CacheCoverage } | { reason: string } | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return { reason: `unreadable: ${(error as Error).message}` };
  }
  if (bytes.subarray(0, MAGIC.length).toString("latin1") !== MAGIC) return { reason: "not a code cache file" };
  const headerEnd = bytes.indexOf(10, MAGIC.length);
  if (headerEnd < 0) return { reason: "truncated" };
  let header: Partial<CacheHeader>;
  try {
    header = JSON.parse(bytes.subarray(MAGIC.length, headerEnd).toString("utf8")) as Partial<CacheHeader>;
  } catch {
    return { reason: "damaged header" };
  }
  const data = bytes.subarray(headerEnd + 1);
  const expected = expectedHeader(bundlePath, source, data);
  for (const key of ["node", "arch", "v8", "bundle"] as const) {
    if (header[key] !== expected[key]) return { reason: `made for another ${key} (${String(header[key])})` };
  }
  if (header.crc32 !== expected.crc32) return { reason: "made from another build of the bundle, or damaged" };
  return { data, covers: header.covers === "requests" ? "requests" : "start" };
}

/** Writes `data` as the cache of this bundle, covering `covers`, into the first of `files` that can be written. */
export function writeCache(files: readonly string[], bundlePath: string, source: Buffer, data: Buffer, covers: CacheCoverage): string {
  const header = `${MAGIC}${JSON.stringify({ ...expectedHeader(bundlePath, source, data), covers })}\n`;
  const failures: string[] = [];
  for (const file of files) {
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(temporary, Buffer.concat([Buffer.from(header, "utf8"), data]), { mode: 0o644 });
      renameSync(temporary, file);
      return `code cache written (${(data.length / 1024).toFixed(0)} KiB, covering the ${covers === "start" ? "start" : "start and requests"}) to ${file}`;
    } catch (error) {
      rmSync(temporary, { force: true });
      failures.push(`${file}: ${(error as Error).message}`);
    }
  }
  return `code cache not written: ${failures.join("; ")}`;
}

/** The CommonJS wrapper, on the bundle's first line so that its line numbers stay those of its source map. */
const WRAPPER_START = "(function (exports, require, module, __filename, __dirname, __import) { ";
const WRAPPER_END = "\n})";

/** Compiles and runs the CommonJS bundle at `bundlePath`, with the code cache when there is a usable one. */
export function loadBundle(bundlePath: string, env: NodeJS.ProcessEnv = process.env): LoadedBundle {
  const source = readFileSync(bundlePath);
  const off = env.BASE_CONTEXT_CODE_CACHE === "off";
  const files = off ? [] : cacheFiles(bundlePath, env);
  let cached: { data: Buffer; covers: CacheCoverage } | undefined;
  const unusable: string[] = [];
  for (const file of files) {
    const found = readCache(file, bundlePath, source);
    if (found === undefined) continue;
    if ("data" in found) {
      cached = found;
      break;
    }
    unusable.push(`${file}: ${found.reason}`);
  }
  const script = new vm.Script(WRAPPER_START + source.toString("utf8") + WRAPPER_END, {
    filename: bundlePath,
    cachedData: cached?.data,
  });
  const used = cached !== undefined && script.cachedDataRejected !== true;
  if (cached !== undefined && !used) unusable.push("refused by V8");
  const state: CodeCacheState = off ? "off" : used ? "used" : unusable.length > 0 ? "stale" : "absent";
  const reason = unusable.length > 0 ? unusable.join("; ") : undefined;
  const module = { exports: {} as Record<string, unknown> };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  // `import()` inside the script fails on Node 20 once its code came from a cache (the script's
  // import callback is not restored): the bundle imports the packages it loads later (openai,
  // chokidar; scripts/bundle.mjs) through this function instead. They resolve from this package.
  const importer = (specifier: string): Promise<unknown> => import(specifier);
  run.call(module.exports, module.exports, createRequire(bundlePath), module, bundlePath, dirname(bundlePath), importer);
  // What the cache on disk covers, as far as this process knows: the one used, then the ones it wrote.
  let covered: CacheCoverage | undefined = used ? cached!.covers : undefined;
  return {
    exports: module.exports,
    state,
    reason,
    covers: used ? cached!.covers : undefined,
    save(covers) {
      if (off || covered === "requests" || covered === covers) return undefined;
      covered = covers;
      try {
        return writeCache(files, bundlePath, source, script.createCachedData(), covers);
      } catch (error) {
        return `code cache not written: ${(error as Error).message}`;
      }
    },
  };
}

/**
 * Runs the Claude Code hook's bundle (cli/claude-code-hook-main.ts) with the command's arguments
 * (those after `claude-code`). Its cache is written once the hook has answered, so it covers what
 * the hook ran (an import, the probes), and only when the one used covered less.
 */
export function hookBundle(bundlePath: string, args: string[]): void {
  const loaded = loadBundle(bundlePath);
  const hookMain = loaded.exports.hookMain as (args: string[], onEnded: () => void) => void;
  log("debug", `claude-code hook: code cache ${loaded.state}${loaded.reason !== undefined ? ` (${loaded.reason})` : ""}`);
  hookMain(args, () => {
    const saved = loaded.save("requests");
    if (saved !== undefined) log("debug", `claude-code hook: ${saved}`);
  });
}

/**
 * `base-context serve`: loads the daemon's bundle with the code cache and serves; writes the cache
 * at the daemon's quiet moments (never on a request's path): once it has started (the code its
 * start ran is compiled then) when none was used, and again once it has served requests when the
 * cache covered its start only.
 */
export function serveBundle(bundlePath: string, args: string[]): void {
  const loaded = loadBundle(bundlePath);
  const serveMain = loaded.exports.serveMain as (args: string[], hooks: { onQuiet?: (served: boolean) => void }) => void;
  const said = loaded.reason !== undefined ? ` (${loaded.reason})` : loaded.covers !== undefined ? ` (covering the ${loaded.covers === "start" ? "start only" : "start and requests"})` : "";
  log("debug", `start: code cache ${loaded.state}${said}`);
  serveMain(args, {
    onQuiet: (served) => {
      const saved = loaded.save(served ? "requests" : "start");
      if (saved !== undefined) log("debug", `start: ${saved}`);
    },
  });
}
