/**
 * What the user types while Claude Code's agent is working is queued: an `enqueue` line with the
 * message (`content`). Claude Code then either starts a turn with it (`dequeue`, the oldest first:
 * a user line with the same words follows, which is the conversation's), or hands it to the model
 * between two steps of the turn (`remove`): then no conversation line holds those words, and they
 * are the user's (a request, a correction), so the import gives them to the conversation there
 * (parser.ts, `queuedMessage`). A `remove` takes the latest message the user typed (harness
 * notifications queued the same way, `<task-notification>`…, wait for a turn of their own), or the
 * latest of any when there is none. (Read from the transcripts of Claude Code 2.0 and 2.1: the
 * words of a `remove`d message appear in no line but the queue's, those of a `dequeue`d one in the
 * user line after it.)
 */
import { isJsonObject, type JsonObject } from "../json-line.js";
import { SnapshotError, type SnapshotReader } from "../snapshot.js";
import { textOf } from "./content.js";
import { injectedKind } from "./injected.js";

/** Messages waiting at most (a queue nobody empties must not grow the parser's state without end). */
const MAX_WAITING = 64;

export class QueuedMessages {
  private waiting: string[] = [];
  /** Messages handed over so far: the next one's number, for an id that is the same at every import. */
  delivered = 0;

  /** A `queue-operation` line: the message it hands to the model, if it does. */
  line(value: JsonObject): string | undefined {
    if (value.operation === "enqueue") {
      const text = typeof value.content === "string" ? value.content : textOf(isJsonObject(value.content) ? [value.content] : value.content);
      if (text.trim().length > 0) this.waiting.push(text);
      if (this.waiting.length > MAX_WAITING) this.waiting.shift();
      return undefined;
    }
    if (value.operation === "dequeue") {
      this.waiting.shift();
      return undefined;
    }
    if (value.operation !== "remove" || this.waiting.length === 0) return undefined;
    let index = this.waiting.length - 1;
    for (let at = index; at >= 0; at--) {
      if (injectedKind(this.waiting[at]!, false) === undefined) {
        index = at;
        break;
      }
    }
    this.delivered++;
    return this.waiting.splice(index, 1)[0];
  }

  snapshot(): unknown {
    return { waiting: this.waiting, delivered: this.delivered };
  }

  restore(state: SnapshotReader): void {
    this.waiting = state.list("waiting").map((text) => {
      if (typeof text !== "string") throw new SnapshotError("waiting: not a message");
      return text;
    });
    this.delivered = state.number("delivered");
  }
}
