/** Setup file of the postgres project: drops the databases a test file made once the file is done. */
import { afterAll } from "vitest";
import { dropAllStores } from "./engine.js";

afterAll(dropAllStores);
