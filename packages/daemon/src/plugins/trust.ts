/**
 * Which projects the user trusts to run their plugins. Kept in the global folder
 * (`$BASE_CONTEXT_HOME/trust.json`), never in the project: cloning a repository must not be
 * enough to run its code.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import { log } from "../log.js";

const TrustFile = z.object({
  version: z.literal(1),
  projects: z.record(z.string(), z.object({ trusted: z.boolean(), at: z.string() })),
});
type TrustFile = z.infer<typeof TrustFile>;

/** One spelling per project folder: absolute, symlinks resolved when the folder exists. */
export function normalizeProjectDir(projectDir: string): string {
  const absolute = resolve(projectDir);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

export class TrustStore {
  readonly file: string;

  constructor(home: string) {
    this.file = join(home, "trust.json");
  }

  /** Read on every question: the file is tiny, and another daemon may have changed it. */
  private read(): TrustFile {
    if (!existsSync(this.file)) return { version: 1, projects: {} };
    try {
      return TrustFile.parse(JSON.parse(readFileSync(this.file, "utf8")));
    } catch (error) {
      // Failing closed: an unreadable trust list trusts nothing.
      log("warn", `plugins: ignoring ${this.file}: ${(error as Error).message}`);
      return { version: 1, projects: {} };
    }
  }

  isTrusted(projectDir: string): boolean {
    return this.read().projects[normalizeProjectDir(projectDir)]?.trusted === true;
  }

  async setTrusted(projectDir: string, trusted: boolean): Promise<void> {
    const contents = this.read();
    const key = normalizeProjectDir(projectDir);
    if (trusted) contents.projects[key] = { trusted: true, at: new Date().toISOString() };
    else delete contents.projects[key];
    await mkdir(dirname(this.file), { recursive: true });
    // Write then rename, so a crash never leaves a half-written trust list behind.
    const temporary = `${this.file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(contents, null, 2)}\n`, "utf8");
    await rename(temporary, this.file);
  }
}
