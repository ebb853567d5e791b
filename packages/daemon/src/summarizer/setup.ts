/**
 * Which summarizer a daemon uses with these settings, in words: the startup log and `doctor` say
 * the same thing, host included, so nobody learns from a bill where their conversations went.
 */
import type { Settings } from "@base-context/protocol";
import { DEFAULT_SUMMARIZER_MODEL } from "./create.js";
import { modelEndpoint } from "./openai.js";

export interface SummarizerSetup {
  /** One line: what writes the summaries, and where a model's requests go. */
  readonly summary: string;
  /** Set when the model named by the settings would be used (doctor checks its endpoint). */
  readonly model?: { readonly name: string; readonly endpoint: string };
  /**
   * Set when a key variable is present but no longer selects a model by itself (the first
   * versions of `auto` sent conversations to the default host then): what changed and how to
   * restore it.
   */
  readonly migration?: string;
  /** How to change it, for `doctor`. */
  readonly hints: readonly string[];
}

export interface SetupOptions {
  /** The global settings name `summarizer.model` (see createSummarizer). */
  readonly userNamedModel: boolean;
  /** The global settings file, shown in hints. */
  readonly settingsPath: string;
  /**
   * The global settings set `summarizer.provider` themselves: the user chose `auto` knowing what it
   * does now, so the note about the old key-only behaviour is not repeated.
   */
  readonly providerSetByUser?: boolean;
}

const CLIENT_FIRST = "the connected client's own model when it offers one (model/complete), else";
const OFFLINE = "extractive (built in, offline: nothing leaves this machine)";

export function describeSummarizerSetup(settings: Settings["summarizer"], env: NodeJS.ProcessEnv, options: SetupOptions): SummarizerSetup {
  const name = settings.model ?? DEFAULT_SUMMARIZER_MODEL;
  const endpoint = modelEndpoint(settings.baseURL, env);
  const model = { name, endpoint };
  const key = `$${settings.apiKeyEnv}`;
  if (settings.provider === "extractive") {
    return { summary: `${OFFLINE}, as configured (summarizer.provider "extractive")`, hints: [] };
  }
  if (settings.provider === "openai") {
    return { summary: `model ${name} at ${endpoint} (summarizer.provider "openai")`, model, hints: [] };
  }
  if (options.userNamedModel) {
    return { summary: `auto: ${CLIENT_FIRST} model ${name} at ${endpoint}`, model, hints: [] };
  }
  const hints = [
    `To summarize with a model when no client offers one, name it in ${options.settingsPath}: "summarizer": { "model": "${DEFAULT_SUMMARIZER_MODEL}" } ` +
      `(with "baseURL" for a host other than ${modelEndpoint(undefined, {})}), and set ${key}.`,
  ];
  const migration =
    env[settings.apiKeyEnv] && options.providerSetByUser !== true
      ? `${key} is set, but a key alone no longer sends conversations to a model host (earlier versions of "auto" sent them to model ${DEFAULT_SUMMARIZER_MODEL} at ${endpoint}). ` +
        `To keep doing so, name the model in ${options.settingsPath}: "summarizer": { "model": "${DEFAULT_SUMMARIZER_MODEL}" }; ` +
        `to keep the new behaviour without this note, set "summarizer": { "provider": "auto" } there`
      : undefined;
  return { summary: `auto: ${CLIENT_FIRST} ${OFFLINE}; no model host is contacted`, ...(migration ? { migration } : {}), hints };
}
