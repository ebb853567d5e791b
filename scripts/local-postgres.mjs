#!/usr/bin/env node
// A PostgreSQL server for trying Base Context on PostgreSQL (README.md, docs/storage.md):
//
//   node scripts/local-postgres.mjs <folder>          create the cluster there if needed, start it,
//                                                     print the store URL on stdout
//   node scripts/local-postgres.mjs <folder> --stop   stop it
//
// The cluster belongs to the current user (to the `postgres` user when run as root: PostgreSQL
// refuses to run as root), listens on 127.0.0.1 only, on a free port chosen at creation (another
// one at a start that finds it taken), and asks for a password (generated, kept in the folder).
// So that `export BASE_CONTEXT_STORE_URL=$(node scripts/local-postgres.mjs ~/bc-postgres)` works,
// stdout carries the URL alone; what happened and what to do next goes to stderr.
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";

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
  const bin = findBinaries();
  const asRoot = process.getuid?.() === 0;
  const run = (program, programArgs, options = {}) => runAs(asRoot, join(bin, program), programArgs, options);
  if (stop) {
    if (!existsSync(join(dir, "PG_VERSION"))) fail(`${dir} has no PostgreSQL cluster`);
    const result = run("pg_ctl", ["-D", dir, "-m", "fast", "-w", "stop"]);
    if (result.status !== 0 && !/Is server running\?/.test(result.stderr)) fail(`pg_ctl stop failed:\n${result.stderr}`);
    say(result.status === 0 ? `Stopped the server in ${dir}.` : `The server in ${dir} was not running.`);
    process.exit(0);
  }
  if (!existsSync(join(dir, "PG_VERSION"))) await create(run, asRoot);
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

async function create(run, asRoot) {
  if (existsSync(dir) && readdirSync(dir).length > 0) fail(`${dir} exists and is not empty: give a new or empty folder`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (asRoot) {
    execFileSync("chown", ["postgres:postgres", dir]);
    const reach = spawnSync("runuser", ["-u", "postgres", "--", "test", "-w", dir]);
    if (reach.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      fail(`the postgres user cannot write ${dir} (is a parent folder private to you?): give a folder it can reach, e.g. under /var/tmp`);
    }
  }
  const password = randomBytes(18).toString("base64url");
  // initdb reads the superuser's password from a file; it is written outside the cluster's folder
  // (initdb wants that empty) and removed at once.
  const pwfile = join(dir, "..", `.${PASSWORD_FILE}-${process.pid}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (asRoot) execFileSync("chown", ["postgres", pwfile]);
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
  if (asRoot) execFileSync("chown", ["postgres:postgres", join(dir, PASSWORD_FILE), join(dir, CONF_FILE)]);
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
  ensureDatabase(run, port);
  return port;
}

function ensureDatabase(run, port) {
  const password = readFileSync(join(dir, PASSWORD_FILE), "utf8").trim();
  const env = { ...process.env, PGPASSWORD: password };
  const connect = ["-h", "127.0.0.1", "-p", String(port), "-U", USER];
  const found = run("psql", [...connect, "-d", "postgres", "-tAc", `SELECT 1 FROM pg_database WHERE datname = '${DATABASE}'`], { env });
  if (found.status !== 0) fail(`cannot connect to the server:\n${found.stderr}`);
  if (found.stdout.trim() === "1") return;
  const created = run("createdb", [...connect, DATABASE], { env });
  if (created.status !== 0) fail(`createdb failed:\n${created.stderr}`);
}

function configuredPort() {
  const match = /^port = (\d+)$/m.exec(readFileSync(join(dir, CONF_FILE), "utf8"));
  if (!match) fail(`${join(dir, CONF_FILE)} names no port`);
  return Number(match[1]);
}

/** The server's programs: PG_BIN, else pg_config's folder, else Debian's and Homebrew's usual places, else the PATH. */
function findBinaries() {
  const candidates = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const pgConfig = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  if (pgConfig.status === 0) candidates.push(pgConfig.stdout.trim());
  for (const root of ["/usr/lib/postgresql", "/opt/homebrew/opt", "/usr/local/opt"]) {
    if (!existsSync(root)) continue;
    const versions = readdirSync(root)
      .filter((name) => /^(\d+|postgresql(@\d+)?)$/.test(name))
      .sort((a, b) => Number(b.replace(/\D/g, "") || 0) - Number(a.replace(/\D/g, "") || 0));
    for (const version of versions) candidates.push(join(root, version, "bin"));
  }
  for (const folder of (process.env.PATH ?? "").split(":")) if (folder) candidates.push(folder);
  const found = candidates.find((folder) => ["initdb", "pg_ctl", "psql", "createdb"].every((name) => existsSync(join(folder, name))));
  if (!found) {
    fail(
      "PostgreSQL's server programs (initdb, pg_ctl) were not found. Install them (Debian/Ubuntu: apt-get install postgresql;\n" +
        "macOS: brew install postgresql@16) or set PG_BIN to the folder that has them.",
    );
  }
  return found;
}

/** Runs a PostgreSQL program as the current user, or as `postgres` when that is root. */
function runAs(asRoot, program, programArgs, options = {}) {
  const [command, commandArgs] = asRoot ? ["runuser", ["-u", "postgres", "--", program, ...programArgs]] : [program, programArgs];
  const result = spawnSync(command, commandArgs, { encoding: "utf8", cwd: asRoot ? "/" : process.cwd(), ...options });
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
