// Preloaded (`--import`) into a worker run from the TypeScript sources: registers
// typescript-hooks.mjs before the worker's entry loads (workers/start-worker.ts).
import { register } from "node:module";

register(new URL("./typescript-hooks.mjs", import.meta.url));
