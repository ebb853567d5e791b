/**
 * Global setup of an extra pass (vitest.config.ts: node22, node24): installs the pass's Node release
 * and builds better-sqlite3's addon for it, once per clone (both are cached in node_modules/.cache).
 */
import type { TestProject } from "vitest/node";
import { NODE_ABIS, ensureSqliteAddon, nodeAbi, ensureNode, type NodeMajor } from "./other-node.js";

export default function setup(project: TestProject): void {
  const major = Number(project.config.env?.["BASE_CONTEXT_TEST_NODE_MAJOR"]) as NodeMajor;
  if (!(major in NODE_ABIS)) throw new Error(`other-node-setup: no Node release named for project ${project.name}`);
  const node = ensureNode(major);
  const abi = nodeAbi(node);
  if (abi !== NODE_ABIS[major]) throw new Error(`Node ${major} reports ABI ${abi}, other-node.ts says ${NODE_ABIS[major]}`);
  ensureSqliteAddon(major);
}
