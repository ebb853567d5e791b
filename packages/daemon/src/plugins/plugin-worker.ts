/**
 * One worker (a thread, or a child process) running one version of one plugin. It owns everything
 * that can go wrong with a call: the timeout (abort the plugin's signal, a short grace, then
 * terminate the worker), cancellation, crashes and out-of-memory deaths, messages over the size
 * limit, and the plugin's requests for the daemon's tokenizer and model. A hung plugin only ever
 * blocks its own worker.
 */
import { PluginLogLevel, type HookName, type PluginErrorKind } from "@base-context/protocol";
import { AsyncResource } from "node:async_hooks";
import type { LogLevel } from "../log.js";
import { callOutcomeOf, describeFailure, type CallOutcome } from "./call-outcome.js";
import type { ChannelExit, PluginChannel } from "./channel.js";
import { forwardLines } from "./output.js";
import { serviceReply, type PluginServices } from "./plugin-services.js";
import type { HostToWorker, ServiceMethod, WorkerBoot, WorkerToHost } from "./wire.js";
import { callIdOf, isOver, MAX_LOG_CHARS, tooLargeMessage, workerMessage } from "./worker-inbox.js";

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
        this.onReady?.reject(new PluginActivationError(describeFailure(message.error, this.boot.dir)));
        this.onReady = undefined;
        void this.terminate();
        break;
      case "throw":
        if (message.error.stack !== undefined) this.options.onLog("debug", message.error.stack);
        this.finishCall(message.callId, callOutcomeOf(message, this.boot.dir));
        break;
      case "return":
      case "unserializable":
      case "too-large":
      case "out-of-memory":
        this.finishCall(message.callId, callOutcomeOf(message, this.boot.dir));
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

  private async serve(requestId: number, callId: number, method: ServiceMethod, params: unknown): Promise<void> {
    const call = this.calls.get(callId);
    if (call === undefined || call.settled) {
      this.send({ t: "reply", requestId, error: { name: "AbortError", message: "the hook call is already over" } });
      return;
    }
    const { pluginId, name, version, generation } = this.boot;
    const caller = { pluginId, name, version, generation, hook: call.hook };
    const reply = await serviceReply(
      this.options.services,
      { requestId, method, params },
      { caller, signal: call.services.signal, scope: call.scope, maxBytes: call.maxBytes },
    );
    if (this.state !== "dead") this.channel.post(reply);
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
