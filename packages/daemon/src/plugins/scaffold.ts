/**
 * `base-context plugin new <name>`: writes a minimal, working plugin folder (package.json with
 * the `baseContext` field, a TypeScript entry, a README). It runs as is: the daemon strips the
 * types and provides `@base-context/plugin-sdk`, so there is nothing to install or build.
 */
import { existsSync, readdirSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PLUGIN_API_VERSION } from "@base-context/protocol";
import { baseContextHome } from "../paths.js";
import { globalPluginsRoot } from "./discovery.js";

export interface ScaffoldOptions {
  /** Folder name, also the package name: lowercase letters, digits, `-`, `_`, `.`. */
  name: string;
  /** Where the plugin folder goes (default: the global plugins folder, `$BASE_CONTEXT_HOME/plugins`). */
  parentDir?: string;
  /** `ts` (default) or `js`. */
  language?: "ts" | "js";
}

export interface ScaffoldResult {
  dir: string;
  files: string[];
}

/** Exported for the CLI, which reports a bad name as a usage error. */
export const VALID_NAME = /^[a-z0-9][a-z0-9._-]{0,213}$/;

function packageJson(name: string, entry: string): string {
  const pkg = {
    name,
    version: "0.1.0",
    private: true,
    type: "module",
    description: "A Base Context plugin",
    baseContext: { apiVersion: PLUGIN_API_VERSION, main: entry },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

function entrySource(name: string, language: "ts" | "js"): string {
  const eventTypes = language === "ts" ? ", type CompactHookEvent" : "";
  return `import { definePlugin${eventTypes} } from "@base-context/plugin-sdk";

// Runs in its own worker thread inside the daemon. Save this file and the daemon reloads it.
export default definePlugin({
  name: ${JSON.stringify(name)},
  apiVersion: ${PLUGIN_API_VERSION},
  hooks: {
    async session_before_compact(event${language === "ts" ? ": CompactHookEvent" : ""}, ctx) {
      const { preparation } = event;
      ctx.log("info", \`would summarize \${preparation.messagesToSummarize.length} messages\`);

      // Return nothing: the daemon summarizes as usual.
      // Return { cancel: true }: this compaction does not happen.
      // Return your own summary:
      //   const { text } = await ctx.complete({ prompt: "…", maxTokens: 1024 });
      //   return {
      //     compaction: {
      //       summary: text,
      //       firstKeptEntryId: preparation.firstKeptEntryId,
      //       tokensBefore: preparation.tokensBefore,
      //     },
      //   };
      return undefined;
    },
  },
});
`;
}

function readme(name: string, entry: string): string {
  return `# ${name}

A Base Context plugin. \`${entry}\` is loaded by the daemon in its own worker thread; saving it
reloads the plugin (the previous version keeps serving until the new one has loaded).

- Check it is loaded: \`plugins/list\` (status \`active\`), or the daemon's log on stderr.
- Hooks: \`session_before_compact\`, \`session_before_tree\`; see docs/plugins.md in the Base Context repository.
`;
}

export async function scaffoldPlugin(options: ScaffoldOptions): Promise<ScaffoldResult> {
  const { name } = options;
  if (!VALID_NAME.test(name)) {
    throw new Error(`invalid plugin name "${name}": use lowercase letters, digits, "-", "_" or ".", starting with a letter or digit`);
  }
  const language = options.language ?? "ts";
  const dir = join(options.parentDir ?? globalPluginsRoot(baseContextHome()), name);
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} already exists and is not empty`);

  const entry = language === "ts" ? "index.ts" : "index.js";
  const files: Record<string, string> = {
    "package.json": packageJson(name, entry),
    [entry]: entrySource(name, language),
    "README.md": readme(name, entry),
  };
  await mkdir(dir, { recursive: true });
  // The entry goes last: a watching daemon then loads a complete folder on the first try.
  for (const file of ["package.json", "README.md", entry]) await writeFile(join(dir, file), files[file]!, "utf8");
  return { dir, files: Object.keys(files) };
}
