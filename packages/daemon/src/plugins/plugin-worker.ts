/**
 * One worker (a thread, or a child process) running one version of one plugin. It owns everything
 * that can go wrong with a call: the timeout (abort the plugin's signal, a short grace, then
 * terminate the worker), cancellation, crashes and out-of-memory deaths, messages over the size
 * limit, and the plugin's requests for the daemon's tokenizer and model. A hung plugin only ever
 * blocks its own worker.
 */
import {
  PluginCompleteRequest,
  PluginLogLevel,
  type HookName,
  type PluginCompleteResult,
  type PluginErrorKind,
} from "@base-context/protocol";
import { AsyncResource } from "node:async_hooks";
import { z } from "zod";
import { utf8ByteLength } from "@base-context/core";
import type { LogLevel } from "../log.js";
import type { ChannelExit, PluginChannel } from "./channel.js";
import { forwardLines } from "./output.js";
import { describeWireError, stackLocation, toWireError, type HostToWorker, type WorkerBoot, type WorkerToHost } from "./wire.js";

/** "message (at index.ts:12:11)": where in the plugin's files it failed, when the stack says. */
function withLocation(message: string, location: string | undefined): string {
  return location === undefined ? message : `${message} (at ${location})`;
}

/** Which plugin asks, for the daemon's services (attribution, per-plugin limits). */
export interface PluginCaller {
  pluginId: string;
  name: string;
  version: string;
  generation: number;
  hook: HookName;
}

/** The daemon's side of `ctx.complete` / `ctx.countTokens`. */
export interface PluginServices {
  complete(request: PluginCompleteRequest, signal: AbortSignal, caller: PluginCaller): Promise<PluginCompleteResult>;
  countTokens(text: string, caller: PluginCaller): number | Promise<number>;
}

export type CallOutcome =
  | { ok: true; value: unknown }
  | { ok: false; kind: PluginErrorKind | "cancelled"; message: string };

export interface WorkerDeath {
  cause: "timeout" | "crash" | "oom";
  message: string;
  /** Hooks whose calls were still running; those calls report the failure themselves. */
  hooksInFlight: HookName[];
}

export interface PluginWorkerOptions {
  boot: WorkerBoot;
  services: PluginServices;
  /** A started worker that has loaded no plugin (see worker-thread.ts, child-process.ts). */
  channel: PluginChannel;
  /** The size limit for messages that belong to no call (before the first call, logs). */
  defaultMaxMessageBytes: number;
  activationTimeoutMs: number;
  /** After a timeout or cancel, how long the plugin may take to notice its aborted signal. */
  abortGraceMs: number;
  onLog(level: LogLevel, message: string): void;
  /** The thread died or was killed while serving (not after `terminate`, nor once retired and idle). */
  onDeath(worker: PluginWorker, death: WorkerDeath): void;
  /** Asked to stop, the thread was still running after the channel's stop timeout: it is abandoned. */
  onStuck?(worker: PluginWorker): void;
}

export class PluginActivationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PluginActivationError";
  }
}

interface RunningCall {
  hook: HookName;
  settled: boolean;
  settle(outcome: CallOutcome): void;
  /** Aborts the daemon-side services (a model call) working for this call. */
  services: AbortController;
  /**
   * The async context of whoever started the call: the plugin's requests (they arrive as worker
   * messages) are served in it, so a model call reaches the client whose request ran the hook.
   */
  scope: AsyncResource;
  timers: NodeJS.Timeout[];
  /** `plugins.maxMessageBytes` for this call. */
  maxBytes: number;
}

const CountTokensParams = z.object({ text: z.string() });

/** A message of the bootstrap's protocol (a JSON string of an object with a `t`), else undefined. */
function workerMessage(raw: unknown): WorkerToHost | undefined {
  if (typeof raw !== "string") return undefined;
  try {
    const message = JSON.parse(raw) as unknown;
    return typeof message === "object" && message !== null && typeof (message as { t?: unknown }).t === "string"
      ? (message as WorkerToHost)
      : undefined;
  } catch {
    return undefined;
  }
}
/** A plugin's log line is cut here (the whole message is within the size limit, but a log is no place for megabytes). */
const MAX_LOG_CHARS = 16_384;

/** The call a message of the bootstrap's protocol belongs to, read from its first characters only. */
function callIdOf(raw: string): number | undefined {
  const match = /"callId":(\d+)/.exec(raw.slice(0, 200));
  return match === null ? undefined : Number(match[1]);
}

/** Whether `raw` is over `maxBytes` UTF-8 bytes, without encoding it (and mostly without scanning it). */
function isOver(raw: string, maxBytes: number): boolean {
  if (raw.length > maxBytes) return true;
  if (raw.length * 3 <= maxBytes) return false;
  return utf8ByteLength(raw) > maxBytes;
}

export function tooLargeMessage(what: string, bytes: number | undefined, maxBytes: number): string {
  const size = bytes === undefined ? "over" : `${bytes} bytes, over`;
  return `${what} is ${size} plugins.maxMessageBytes (${maxBytes} bytes)`;
}

export class PluginWorker {
  readonly boot: WorkerBoot;
  private readonly options: PluginWorkerOptions;
  private readonly channel: PluginChannel;
  private hookSet: ReadonlySet<HookName> = new Set();
  private readonly calls = new Map<number, RunningCall>();
  private nextCallId = 1;
  private state: "starting" | "ready" | "retiring" | "dead" = "starting";
  private onReady: { resolve(): void; reject(error: PluginActivationError): void } | undefined;
  /** Set by the first request to end the worker: whether it ended. */
  private stopping: Promise<boolean> | undefined;

  /** Starts a fresh thread and resolves once the plugin module has loaded and passed its checks. */
  static async start(options: PluginWorkerOptions): Promise<PluginWorker> {
    const instance = new PluginWorker(options);
    await instance.activation();
    return instance;
  }

  private constructor(options: PluginWorkerOptions) {
    this.options = options;
    this.boot = options.boot;
    this.channel = options.channel;
    forwardLines(this.channel.stdout, (line) => options.onLog("info", line));
    forwardLines(this.channel.stderr, (line) => options.onLog("warn", line));
    this.channel.onMessage((raw: unknown) => {
      if (typeof raw === "string" && isOver(raw, this.messageLimit())) {
        this.refuseOversize(raw);
        return;
      }
      const message = workerMessage(raw);
      // Not from the bootstrap: the plugin itself posted on `parentPort`. Throwing here would end the daemon.
      if (message === undefined)
        options.onLog(
          "warn",
          "ignored a message on the worker's port that is not the host's protocol (does the plugin post on parentPort?)",
        );
      else this.receive(message);
    });
    this.channel.onOversize?.((start) => this.refuseOversize(start));
    this.channel.onExit((exit) => this.exited(exit));
    this.send({ t: "activate", boot: options.boot });
  }

  get hooks(): ReadonlySet<HookName> {
    return this.hookSet;
  }

  get alive(): boolean {
    return this.state === "ready" || this.state === "retiring";
  }

  private activation(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.onReady = undefined;
        void this.terminate();
        reject(new PluginActivationError(`the plugin did not load within ${this.options.activationTimeoutMs} ms`));
      }, this.options.activationTimeoutMs);
      this.onReady = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }

  /**
   * Runs one hook. `eventJson` and `settingsJson` are already JSON, so an event shared by several
   * plugins is serialized once. Never throws: failures come back as outcomes, for the caller to report.
   */
  call(
    hook: HookName,
    eventJson: string,
    settingsJson: string,
    limits: { timeoutMs: number; maxMessageBytes: number; signal?: AbortSignal },
  ): Promise<CallOutcome> {
    if (!this.alive) return Promise.resolve({ ok: false, kind: "crash", message: "the plugin's worker is not running" });
    if (limits.signal?.aborted) return Promise.resolve({ ok: false, kind: "cancelled", message: "cancelled before the hook ran" });
    const callId = this.nextCallId++;
    return new Promise<CallOutcome>((resolve) => {
      const onCancel = (): void => {
        call.settle({ ok: false, kind: "cancelled", message: "cancelled by the daemon" });
        this.abortCall(callId, "AbortError", "the daemon cancelled the request");
      };
      const call: RunningCall = {
        hook,
        settled: false,
        services: new AbortController(),
        scope: new AsyncResource("PluginHookCall"),
        timers: [],
        maxBytes: limits.maxMessageBytes,
        settle: (outcome) => {
          if (call.settled) return;
          call.settled = true;
          limits.signal?.removeEventListener("abort", onCancel);
          resolve(outcome);
        },
      };
      this.calls.set(callId, call);
      limits.signal?.addEventListener("abort", onCancel, { once: true });
      call.timers.push(setTimeout(() => this.timedOut(callId, limits.timeoutMs), limits.timeoutMs));
      this.channel.post(
        `{"t":"call","callId":${callId},"hook":${JSON.stringify(hook)},"maxBytes":${limits.maxMessageBytes},"settings":${settingsJson},"event":${eventJson}}`,
      );
    });
  }

  /** The largest message accepted now: the largest limit of the running calls, else the default. */
  private messageLimit(): number {
    let limit = 0;
    for (const call of this.calls.values()) limit = Math.max(limit, call.maxBytes);
    return limit === 0 ? this.options.defaultMaxMessageBytes : limit;
  }

  /**
   * A message over the limit is never parsed (its size is the problem): the call it belongs to
   * fails as too-large; a message of no call is dropped. The bootstrap refuses such results
   * itself, so this is a plugin going around it.
   */
  private refuseOversize(raw: string): void {
    const limit = this.messageLimit();
    const callId = callIdOf(raw);
    const message = tooLargeMessage("a message from the plugin", undefined, limit);
    if (callId !== undefined && this.calls.has(callId)) this.finishCall(callId, { ok: false, kind: "too-large", message });
    else this.options.onLog("warn", `ignored ${message}`);
  }

  private timedOut(callId: number, timeoutMs: number): void {
    const call = this.calls.get(callId);
    if (call === undefined) return;
    const message = `the hook did not finish within ${timeoutMs} ms`;
    call.settle({ ok: false, kind: "timeout", message });
    this.abortCall(callId, "TimeoutError", message);
    call.timers.push(
      setTimeout(() => {
        if (this.calls.has(callId)) this.kill({ cause: "timeout", message, hooksInFlight: this.hooksInFlight() });
      }, this.options.abortGraceMs),
    );
  }

  private abortCall(callId: number, name: string, message: string): void {
    const call = this.calls.get(callId);
    if (call === undefined) return;
    call.services.abort(new DOMException(message, name));
    this.send({ t: "abort", callId, reason: { name, message } });
  }

  private finishCall(callId: number, outcome: CallOutcome): void {
    const call = this.calls.get(callId);
    if (call === undefined) return;
    this.calls.delete(callId);
    for (const timer of call.timers) clearTimeout(timer);
    call.settle(outcome);
    if (this.state === "retiring" && this.calls.size === 0) void this.terminate();
  }

  private receive(message: WorkerToHost): void {
    switch (message.t) {
      case "ready":
        this.hookSet = new Set(message.hooks);
        this.state = "ready";
        this.onReady?.resolve();
        this.onReady = undefined;
        break;
      case "activation-failed":
        this.onReady?.reject(
          new PluginActivationError(withLocation(describeWireError(message.error), stackLocation(message.error.stack, this.boot.dir))),
        );
        this.onReady = undefined;
        void this.terminate();
        break;
      case "return":
        this.finishCall(message.callId, { ok: true, value: message.value });
        break;
      case "throw":
        if (message.error.stack !== undefined) this.options.onLog("debug", message.error.stack);
        this.finishCall(message.callId, {
          ok: false,
          kind: "exception",
          message: withLocation(describeWireError(message.error), stackLocation(message.error.stack, this.boot.dir)),
        });
        break;
      case "unserializable":
        this.finishCall(message.callId, { ok: false, kind: "invalid-result", message: message.message });
        break;
      case "too-large":
        this.finishCall(message.callId, {
          ok: false,
          kind: "too-large",
          message: tooLargeMessage("the hook's result", message.bytes ?? undefined, message.maxBytes),
        });
        break;
      case "out-of-memory":
        this.finishCall(message.callId, { ok: false, kind: "oom", message: `the plugin ran out of memory: ${message.message}` });
        break;
      case "request":
        void this.serve(message.requestId, message.callId, message.method, message.params);
        break;
      case "log": {
        const level = PluginLogLevel.safeParse(message.level);
        this.options.onLog(level.success ? level.data : "info", String(message.message).slice(0, MAX_LOG_CHARS));
        break;
      }
    }
  }

  private async serve(requestId: number, callId: number, method: "complete" | "countTokens", params: unknown): Promise<void> {
    const call = this.calls.get(callId);
    if (call === undefined || call.settled) {
      this.send({ t: "reply", requestId, error: { name: "AbortError", message: "the hook call is already over" } });
      return;
    }
    const { pluginId, name, version, generation } = this.boot;
    const caller: PluginCaller = { pluginId, name, version, generation, hook: call.hook };
    try {
      const value =
        method === "countTokens"
          ? await this.options.services.countTokens(CountTokensParams.parse(params).text, caller)
          : await call.scope.runInAsyncScope(() =>
              this.options.services.complete(PluginCompleteRequest.parse(params), call.services.signal, caller),
            );
      const reply = JSON.stringify({ t: "reply", requestId, value } satisfies HostToWorker);
      if (isOver(reply, call.maxBytes)) {
        this.send({
          t: "reply",
          requestId,
          error: { name: "RangeError", message: tooLargeMessage(`the answer to ctx.${method}`, utf8ByteLength(reply), call.maxBytes) },
        });
      } else if (this.state !== "dead") this.channel.post(reply);
    } catch (error) {
      this.send({ t: "reply", requestId, error: toWireError(error) });
    }
  }

  private send(message: HostToWorker): void {
    if (this.state !== "dead") this.channel.post(JSON.stringify(message));
  }

  private hooksInFlight(): HookName[] {
    return [...this.calls.values()].map((call) => call.hook);
  }

  /** Ends the thread because it misbehaved; running calls fail with `death.cause`. */
  private kill(death: WorkerDeath): void {
    if (this.state === "dead") return;
    this.options.onLog("warn", `terminating the worker: ${death.message}`);
    this.shutDown(death.cause, death.message);
    this.options.onDeath(this, death);
  }

  private exited(exit: ChannelExit): void {
    if (this.state === "dead") return;
    const { cause, message } = exit;
    if (this.onReady !== undefined) {
      this.onReady.reject(new PluginActivationError(message));
      this.onReady = undefined;
      this.state = "dead";
      return;
    }
    const hooksInFlight = this.hooksInFlight();
    this.shutDown(cause, message);
    this.options.onDeath(this, { cause, message, hooksInFlight });
  }

  private shutDown(kind: PluginErrorKind | "cancelled", message: string): void {
    this.state = "dead";
    for (const [callId, call] of this.calls) {
      for (const timer of call.timers) clearTimeout(timer);
      call.services.abort(new DOMException(message, "AbortError"));
      call.settle({ ok: false, kind, message });
      this.calls.delete(callId);
    }
    void this.stopChannel();
  }

  private stopChannel(): Promise<boolean> {
    this.stopping ??= this.channel.terminate().then((stopped) => {
      if (!stopped) this.options.onStuck?.(this);
      return stopped;
    });
    return this.stopping;
  }

  /**
   * Hot reload: the thread ends once the calls it is running have answered. Each call ends by its
   * own timeout anyway; `maxWaitMs` is a backstop.
   */
  retire(maxWaitMs: number): void {
    if (this.state !== "ready") return;
    this.state = "retiring";
    if (this.calls.size === 0) {
      void this.terminate();
      return;
    }
    setTimeout(() => void this.terminate(), maxWaitMs).unref();
  }

  /** Ends the thread now; running calls resolve as cancelled. */
  async terminate(): Promise<void> {
    if (this.state !== "dead") this.shutDown("cancelled", "the plugin's worker was stopped");
    await this.stopChannel();
  }
}
