/**
 * What the views share: the daemon, the session they show (the one opened in the Sessions view,
 * else the latest of this workspace), and the news that a session changed — from the daemon's
 * `session/didChange` (any client, any process) or from a command of this window.
 */
import * as vscode from "vscode";
import type { DaemonConnection } from "./daemon/daemon-connection.js";
import { sessionTitle, type Summary } from "./models/sessions-model.js";

export class ExtensionState implements vscode.Disposable {
  private openId: string | undefined;
  private readonly summaries = new Map<string, Summary>();
  private readonly opened = new vscode.EventEmitter<string | undefined>();
  private readonly changed = new vscode.EventEmitter<string>();
  private readonly deleted = new vscode.EventEmitter<string>();
  /** The session the tree, the context and the status bar show changed to another (or none). */
  readonly onDidOpen = this.opened.event;
  /** A session was written (appended to, renamed, compacted, navigated). */
  readonly onDidChangeSession = this.changed.event;
  readonly onDidDeleteSession = this.deleted.event;

  constructor(
    readonly daemon: DaemonConnection,
    readonly log: vscode.OutputChannel,
  ) {}

  get openSessionId(): string | undefined {
    return this.openId;
  }

  open(sessionId: string | undefined): void {
    if (this.openId === sessionId) return;
    this.openId = sessionId;
    void vscode.commands.executeCommand("setContext", "baseContext.sessionOpen", sessionId !== undefined);
    this.opened.fire(sessionId);
  }

  /** What the Sessions view last heard of each session. */
  remember(summaries: readonly Summary[]): void {
    for (const summary of summaries) this.summaries.set(summary.id, summary);
  }

  summary(sessionId: string): Summary | undefined {
    return this.summaries.get(sessionId);
  }

  /** A session's name for messages and titles. */
  title(sessionId: string): string {
    const summary = this.summaries.get(sessionId);
    return summary ? sessionTitle(summary) : `session ${sessionId.slice(0, 8)}`;
  }

  sessionChanged(sessionId: string): void {
    this.changed.fire(sessionId);
  }

  sessionDeleted(sessionId: string): void {
    this.summaries.delete(sessionId);
    this.deleted.fire(sessionId);
    if (this.openId === sessionId) this.open(undefined);
  }

  dispose(): void {
    this.opened.dispose();
    this.changed.dispose();
    this.deleted.dispose();
  }
}
