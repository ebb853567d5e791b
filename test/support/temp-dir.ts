/**
 * Temporary folders that clean up after themselves: `const dirs = tempDirs(); afterEach(dirs.cleanup)`.
 * The one helper for throwaway folders: the end-to-end tests and the packages' unit tests use it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TempDirs {
  /** A fresh empty folder under the OS temp dir. */
  make(prefix?: string): string;
  /** Removes one folder made here (when a test must remove it at a given moment, e.g. after a host stopped). */
  remove(dir: string): void;
  /** Removes every folder made so far. */
  cleanup(): void;
}

export function tempDirs(): TempDirs {
  const made: string[] = [];
  return {
    make(prefix = "base-context-test-") {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    remove(dir) {
      const index = made.indexOf(dir);
      if (index >= 0) made.splice(index, 1);
      rmSync(dir, { recursive: true, force: true });
    },
    cleanup() {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}
