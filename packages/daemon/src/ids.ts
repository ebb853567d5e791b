// The global Web Crypto object, not an import of node:crypto: that module (and every crypto
// module it loads) would be loaded before the daemon could answer anything; this is loaded on the
// first id drawn (docs/architecture.md#start-path-and-bundles).
/** Ids and time, injectable so tests can be deterministic. */
export interface IdSource {
  /** An entry id: 8 lowercase hex characters, as pi writes them. Uniqueness is checked by the store. */
  entryId(): string;
  sessionId(): string;
  /** ISO-8601 timestamp for a new entry. */
  now(): string;
}

/** Random bytes drawn 4 KiB at a time: one call into the CSPRNG per 1,024 entry ids, not per id. */
const randomPool = Buffer.alloc(4096);
let poolOffset = randomPool.length;

function randomHex4(): string {
  if (poolOffset + 4 > randomPool.length) {
    globalThis.crypto.getRandomValues(randomPool);
    poolOffset = 0;
  }
  const hex = randomPool.toString("hex", poolOffset, poolOffset + 4);
  poolOffset += 4;
  return hex;
}

export const defaultIds: IdSource = {
  entryId: randomHex4,
  sessionId: () => globalThis.crypto.randomUUID(),
  now: () => new Date().toISOString(),
};
