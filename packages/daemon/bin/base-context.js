#!/usr/bin/env node
// The `base-context` command. A file of its own rather than dist/cli/main.js: package managers
// link a package's bin when they install it, and in this workspace that happens before `prepare`
// builds dist (a bin pointing into dist could not be linked yet). This file always exists.
import "../dist/cli/main.js";
