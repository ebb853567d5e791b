/** Temporary folders that clean up after themselves: `const dirs = tempDirs(); afterEach(dirs.cleanup)`. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TempDirs {
  /** A fresh empty folder under the OS temp dir. */
  make(prefix?: string): string;
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
    cleanup() {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}
