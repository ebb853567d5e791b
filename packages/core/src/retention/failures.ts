/**
 * Failures and when they stop standing (docs/retention.md "Errors"), one tracker for the
 * retention probes and the extractive summarizer, so both read the same errors the same way:
 *
 * - a failure is known by the keys of the action that failed (resolution.ts): a later success of
 *   one of them fixes it — the same command however wrapped, another approach to the same goal
 *   (the same program and subcommand: `git push -u origin x` after `git push`), a copy to the
 *   same place, the same file written again, any later success for a failed read or a refused call;
 * - a later failure of the same action with another message supersedes it: the error a person
 *   must deal with is the latest;
 * - the assistant saying it is fixed, naming it (or, for a command, saying the build or the tests
 *   pass now), fixes it.
 */
import { ANY_LATER_SUCCESS, maySayFixed, saysFixed } from "./resolution.js";
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
  /** A command's failure: "the build passes now" fixes it. */
  readonly fromCommand: boolean;
  /** A blocker an earlier summary listed (`what` is its line as written there). */
  readonly carried?: boolean;
  /** The user refused the call: it stands until the work goes on, and the user is the one to ask. */
  readonly refused?: boolean;
  /** A look-up that failed (lookups.ts): the agent learned something; it stands until the work goes on. */
  readonly lookup?: boolean;
  resolved: boolean;
  /** Where it stopped standing, and how. */
  resolvedIndex?: number;
  resolvedHow?: "succeeded" | "failed differently" | "said fixed";
}

export class FailureTracker {
  readonly failures: Failure[] = [];
  /** The unresolved failures by each key that fixes them: a success looks up only those it may fix. */
  private readonly byKey = new Map<string, Failure[]>();
  private readonly byAction = new Map<string, Failure[]>();

  failed(failure: Omit<Failure, "resolved" | "resolvedIndex" | "resolvedHow">): void {
    // The same action failing for another reason: the earlier reason is history.
    this.supersede(failure.actionKey, failure.message, failure.index);
    const tracked: Failure = { ...failure, resolved: false };
    this.failures.push(tracked);
    for (const key of new Set(failure.fixedBy)) push(this.byKey, key, tracked);
    push(this.byAction, failure.actionKey, tracked);
  }

  /**
   * The action failed again with `message`, seen where its failures are not tracked (a later
   * part): an earlier failure with another message stops standing.
   */
  supersede(actionKey: string, message: string, index: number): void {
    const normal = normalizeKey(message);
    for (const earlier of this.byAction.get(actionKey) ?? []) {
      if (!earlier.resolved && normalizeKey(earlier.message) !== normal) this.resolve(earlier, index, "failed differently");
    }
  }

  /**
   * A success of an action known by `keys`, and (`action`: a tool or command that worked, not an
   * answer of the model's) the work going on: what stands only until then stops standing.
   */
  succeeded(keys: readonly string[], index: number, action = true): void {
    for (const key of new Set(action ? [...keys, ANY_LATER_SUCCESS] : keys)) {
      for (const failure of this.byKey.get(key) ?? []) this.resolve(failure, index, "succeeded");
    }
  }

  /** An assistant sentence that may say an error was fixed. */
  said(sentence: string, index: number): void {
    if (!maySayFixed(sentence)) return;
    for (const failure of this.failures) {
      if (!failure.resolved && saysFixed(sentence, failure)) this.resolve(failure, index, "said fixed");
    }
  }

  /** The failures still standing: the latest per action, oldest first. */
  standing(): Failure[] {
    const latest = new Map<string, Failure>();
    for (const failure of this.failures) if (!failure.resolved) latest.set(failure.actionKey, failure);
    return [...latest.values()].sort((a, b) => a.index - b.index);
  }

  private resolve(failure: Failure, index: number, how: NonNullable<Failure["resolvedHow"]>): void {
    if (failure.resolved) return;
    failure.resolved = true;
    failure.resolvedIndex = index;
    failure.resolvedHow = how;
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
