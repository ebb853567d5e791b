import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
/** The daemon package's version, read once from its package.json. */
export const VERSION: string = (require("../package.json") as { version: string }).version;
