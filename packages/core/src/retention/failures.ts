/**
 * Failures and when they stop standing (docs/retention.md "Fixed or standing"), one tracker for
 * the retention probes and the extractive summarizer, so both read the same errors the same way:
 *
 * - a failure is known by the keys of the action that failed (resolution.ts): a later success of
 *   one of them fixes it — the same command however wrapped or run (`sudo`, `timeout 5`, the
 *   program by its full path), another approach to the same goal (the same program and
 *   subcommand: `git push -u origin x` after `git push`), a copy to the same place, the same file
 *   written again, the same content written elsewhere, any later success for what stands only
 *   until the work goes on (a failed read or look-up, a refused call, a command the shell could
 *   not parse);
 * - a later failure of the same action with another message supersedes it: the error a person
 *   must deal with is the latest — unless the later one says nothing but its exit status, which
 *   cannot tell that the earlier error is gone; a later failure reaching the same file (or a glob
 *   covering it) supersedes an earlier one reaching it;
 * - a change refused for want of access that is done another way takes with it the access errors
 *   met trying to unblock it (a failing `chown` or `sudo` on the file or its folder);
 * - when the user interrupts the turn, what stood then stays standing: the work did not go on,
 *   the user stopped it (only the same action working, or the assistant saying it is fixed,
 *   resolves it later);
 * - the assistant saying it is fixed, naming it (or, for a build or test command, saying the build
 *   or the tests pass now), fixes it.
 */
import { isExitNote } from "./errors.js";
import { ANY_LATER_SUCCESS, isContentKey, MOVED_ON, maySayFixed, saysFixed, verbWorkKey } from "./resolution.js";
import { normalizeKey } from "./text.js";

export interface Failure {
  /** What failed, as the caller describes it (a command, a tool and its target). */
  readonly what: string;
  /** The error's first line (errors.ts `errorLine`). */
  readonly message: string;
  /** Index of the message that reported it. */
  readonly index: number;
  /** The action it belongs to: a later failure of the same action with another message supersedes it. */
  readonly actionKey: string;
  /** Successes of any of these keys fix it. */
  readonly fixedBy: readonly string[];
  /** A command's failure: "the build passes now" fixes it when the command builds or tests. */
  readonly fromCommand: boolean;
  /** A blocker an earlier summary listed (`what` is its line as written there). */
  readonly carried?: boolean;
  /** The user refused the call: it stands until the work goes on, and the user is the one to ask. */
  readonly refused?: boolean;
  /** A look-up that failed (lookups.ts): the agent learned something; it stands until the work goes on. */
  readonly lookup?: boolean;
  /** It needed the user's password (`sudo` with no terminal): it stands until it runs, and the user is the one to run it. */
  readonly privileged?: boolean;
  /** The shell could not parse the command: it never ran; it stands until the work goes on. */
  readonly malformed?: boolean;
  /** The files it is about: the call's paths (globs kept) and those its message names. */
  readonly paths?: readonly string[];
  /** An error reaching a file or lacking the rights to (permission denied, no such file, a password sudo could not ask for). */
  readonly access?: boolean;
  /** The file a failed change meant to write. */
  readonly changes?: string;
  resolved: boolean;
  /** It stood when the user interrupted the turn: the task it belonged to was stopped, not finished. */
  abandoned?: boolean;
  /** Where it stopped standing, and how. */
  resolvedIndex?: number;
  resolvedHow?: "succeeded" | "failed differently" | "said fixed" | "work went on" | "written elsewhere";
}

/** What the caller tells of a new failure (the tracker sets the rest). */
export type NewFailure = Omit<Failure, "resolved" | "resolvedIndex" | "resolvedHow">;

/** How the key of a command's program and subcommand starts (resolution.ts `verb:git push`). */
const VERB = "verb:";

/** The keys that stand for "the work went on", not for the failed action itself. */
const GOING_ON = new Set([ANY_LATER_SUCCESS, MOVED_ON]);

export class FailureTracker {
  readonly failures: Failure[] = [];
  /** The unresolved failures by each key that fixes them: a success looks up only those it may fix. */
  private readonly byKey = new Map<string, Failure[]>();
  private readonly byAction = new Map<string, Failure[]>();
  /** Commands' failures by program and subcommand and what they act on (`verbWorkKey`): what a later failure of that work supersedes. */
  private readonly byVerbWork = new Map<string, Failure[]>();
  /** The latest result was the user refusing a call (its interruption notice is that refusal, not a stop). */
  private lastRefused = false;

  failed(failure: NewFailure): void {
    this.lastRefused = failure.refused === true;
    // The same action failing for another reason: the earlier reason is history.
    this.supersede(failure.actionKey, failure.message, failure.index, failure.fromCommand ? failure.fixedBy : []);
    if (failure.access === true && !isExitNote(failure.message)) this.supersedeReaching(failure);
    const tracked: Failure = { ...failure, resolved: false };
    this.failures.push(tracked);
    for (const key of new Set(failure.fixedBy)) push(this.byKey, key, tracked);
    push(this.byAction, failure.actionKey, tracked);
    if (failure.fromCommand) {
      for (const key of new Set(failure.fixedBy)) {
        if (key.startsWith(VERB)) push(this.byVerbWork, `${key}\u0000${verbWorkKey(failure.actionKey, key)}`, tracked);
      }
    }
  }

  /**
   * The action failed again with `message` (also seen where its failures are not tracked: a later
   * part): an earlier failure with another message stops standing — of the same action, or, for a
   * command, of the same program and subcommand (`related`: its `verb:` keys, as for a success:
   * `git add x && git commit -m m` failing in its hook, then `git commit -m m` failing for another
   * reason: the commit's latest failure is the one to deal with). A message that is only an exit
   * status cannot say the earlier error is gone.
   */
  supersede(actionKey: string, message: string, index: number, related: readonly string[] = []): void {
    if (isExitNote(message)) return;
    const normal = normalizeKey(message);
    // Of the same program and subcommand: those that named no target, and those acting on the same ones.
    const sameVerb = related
      .filter((key) => key.startsWith(VERB))
      .flatMap((key) => {
        const targets = verbWorkKey(actionKey, key);
        const untargeted = this.byVerbWork.get(`${key}\u0000`) ?? [];
        return targets === "" ? untargeted : [...untargeted, ...(this.byVerbWork.get(`${key}\u0000${targets}`) ?? [])];
      });
    for (const earlier of [...(this.byAction.get(actionKey) ?? []), ...sameVerb]) {
      if (!earlier.resolved && normalizeKey(earlier.message) !== normal) this.resolve(earlier, index, "failed differently");
    }
  }

  /**
   * A success of an action known by `keys`, and (`action`: a tool or command that worked, not an
   * answer of the model's) the work going on: what stands only until then stops standing.
   */
  succeeded(keys: readonly string[], index: number, action = true): void {
    if (action) this.lastRefused = false;
    const all = action ? [...keys, ANY_LATER_SUCCESS] : keys;
    // The action's own keys first: what they fix "succeeded"; what only the work going on resolves, after.
    const ordered = [...all.filter((key) => !GOING_ON.has(key)), ...all.filter((key) => GOING_ON.has(key))];
    for (const key of new Set(ordered)) {
      const how = GOING_ON.has(key) ? "work went on" : isContentKey(key) ? "written elsewhere" : "succeeded";
      for (const failure of this.byKey.get(key) ?? []) this.resolve(failure, index, how);
    }
  }

  /** An assistant sentence that may say an error was fixed. */
  said(sentence: string, index: number): void {
    if (!maySayFixed(sentence)) return;
    for (const failure of this.failures) {
      if (!failure.resolved && saysFixed(sentence, failure)) this.resolve(failure, index, "said fixed");
    }
  }

  /**
   * The user interrupted the turn: what stands now belonged to a task the user stopped. It stays
   * standing — the work going on elsewhere does not resolve it, only its own action working again.
   */
  interrupted(): void {
    // Claude Code writes the notice after a refused call too: the refusal says it all.
    if (this.lastRefused) return;
    for (const key of GOING_ON) {
      const waiting = this.byKey.get(key) ?? [];
      // A refused call is the user's own no: the work that follows answers it.
      this.byKey.set(
        key,
        waiting.filter((failure) => failure.resolved || failure.refused === true),
      );
    }
    for (const failure of this.failures) if (!failure.resolved && failure.refused !== true) failure.abandoned = true;
  }

  /** The failures still standing: the latest per action and message, oldest first. */
  standing(): Failure[] {
    const latest = new Map<string, Failure>();
    for (const failure of this.failures) if (!failure.resolved) latest.set(`${failure.actionKey}\u0000${normalizeKey(failure.message)}`, failure);
    return [...latest.values()].sort((a, b) => a.index - b.index);
  }

  /** An error reaching a file supersedes an earlier one reaching the same file (or one a glob of it covers). */
  private supersedeReaching(failure: NewFailure): void {
    const normal = normalizeKey(failure.message);
    for (const earlier of this.failures) {
      if (earlier.resolved || earlier.access !== true || normalizeKey(earlier.message) === normal) continue;
      if (covers(failure.paths ?? [], earlier.paths ?? [])) this.resolve(earlier, failure.index, "failed differently");
    }
  }

  private resolve(failure: Failure, index: number, how: NonNullable<Failure["resolvedHow"]>): void {
    if (failure.resolved) return;
    failure.resolved = true;
    failure.resolvedIndex = index;
    failure.resolvedHow = how;
    if (failure.changes !== undefined && failure.access === true) this.unblocked(failure, index);
  }

  /** The access errors met trying to unblock a change (on its file or its folder, after it failed) go with it. */
  private unblocked(change: Failure, index: number): void {
    const file = slashes(change.changes!);
    for (const attempt of this.failures) {
      if (attempt.resolved || attempt.access !== true || attempt.index <= change.index || attempt.index > index) continue;
      const reached = (attempt.paths ?? []).map(slashes).some((path) => file === path || file.startsWith(`${path.replace(/\/+$/, "")}/`));
      if (reached) this.resolve(attempt, index, "work went on");
    }
  }
}

/** Whether a path of `later` names a path of `earlier`, or is a glob (`/usr/bin/tool*`) that covers one. */
function covers(later: readonly string[], earlier: readonly string[]): boolean {
  return later.some((path) => {
    const glob = path.includes("*") ? new RegExp(`^${path.split("*").map(escapeRegex).join("[^/]*")}$`) : undefined;
    return earlier.some((other) => other === path || (glob?.test(other) ?? false));
  });
}

function slashes(path: string): string {
  return path.replace(/\\/g, "/");
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
