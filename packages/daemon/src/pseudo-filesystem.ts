/**
 * Folders on a kernel's pseudo file systems (/proc, /sys, cgroups…) cannot hold a Base Context
 * home or database: nothing can be created there, and Node's recursive `mkdirSync` loops without
 * end on some of them (`/proc/nope/x`: its parent exists, the folder can never be made). Such a
 * path is refused up front, with a message naming the file system, before anything tries.
 */
import { statfsSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** `statfs` types (f_type, linux/magic.h) of the file systems the kernel makes up. */
const PSEUDO_FILE_SYSTEMS = new Map<number, string>([
  [0x9fa0, "the kernel's process file system (procfs)"],
  [0x62656572, "the kernel's sysfs"],
  [0x1cd1, "devpts"],
  [0x27e0eb, "a cgroup file system"],
  [0x63677270, "a cgroup2 file system"],
  [0x64626720, "debugfs"],
  [0x74726163, "tracefs"],
  [0x73636673, "securityfs"],
  [0xcafe4a11, "the bpf file system"],
  [0x6165676c, "pstore"],
  [0x62656570, "configfs"],
  [0x65735543, "fusectl"],
  [0x42494e4d, "binfmt_misc"],
  [0x6e736673, "nsfs"],
]);

/**
 * Why `path` cannot be a folder of ours: "/proc is the kernel's process file system (procfs)",
 * read from its nearest existing folder; undefined when it can (or when that cannot be told).
 */
export function pseudoFileSystem(path: string): string | undefined {
  let current = resolve(path);
  for (;;) {
    let type: number;
    try {
      type = statfsSync(current).type;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const parent = dirname(current);
      if ((code !== "ENOENT" && code !== "ENOTDIR") || parent === current) return undefined;
      current = parent;
      continue;
    }
    const name = PSEUDO_FILE_SYSTEMS.get(type);
    return name === undefined ? undefined : `${current} is ${name}, where no folder or file can be made`;
  }
}

/** A home or database folder refused because it lies on a pseudo file system. */
export class PseudoFileSystemError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`cannot use ${path}: ${reason}`);
  }
}

/** Throws PseudoFileSystemError when `path` lies on a pseudo file system. */
export function refusePseudoFileSystem(path: string): void {
  const reason = pseudoFileSystem(path);
  if (reason !== undefined) throw new PseudoFileSystemError(path, reason);
}
