#!/usr/bin/env node
/**
 * The daemon's entry point: `base-context serve …` starts here (bin/base-context.js picks it), so
 * a daemon loads what serving needs and none of the CLI's other commands.
 */
import { finish, runServe } from "./serve-entry.js";

finish(runServe(process.argv.slice(3)), true);
