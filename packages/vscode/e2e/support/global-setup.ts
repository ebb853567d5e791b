/**
 * Before the editor test: code-server installed (once per clone, cached) and the extension
 * packaged as a .vsix from the current sources (the workspace is built by `pnpm test:editor`).
 */
import type { TestProject } from "vitest/node";
import { packageVsix } from "../../scripts/package-vsix.mjs";
import { ensureCodeServer } from "./code-server.js";

export default function setup(project: TestProject): void {
  const started = Date.now();
  const entry = ensureCodeServer();
  const installed = Date.now();
  const vsix = packageVsix();
  console.log(
    `editor test: code-server ready in ${((installed - started) / 1000).toFixed(1)} s, .vsix packaged in ${((Date.now() - installed) / 1000).toFixed(1)} s`,
  );
  project.provide("codeServerEntry", entry);
  project.provide("vsix", vsix);
}

declare module "vitest" {
  export interface ProvidedContext {
    codeServerEntry: string;
    vsix: string;
  }
}
