/**
 * `base-context doctor`'s summarizer check: which summarizer compactions would use with these
 * settings and environment, and — for a model — whether its endpoint answers, with a short
 * timeout: `GET <baseURL>/models` costs nothing and proves the URL, the network and the key.
 * The key is sent to the configured endpoint only, and never printed.
 */
import type { Settings } from "@base-context/protocol";
import { describeSummarizerSetup } from "../summarizer/index.js";
import type { CheckResult } from "./doctor-checks.js";

/** Model ids listed in a hint; a long list helps nobody. */
const LISTED_MODELS = 8;

export interface SummarizerCheckOptions {
  env: NodeJS.ProcessEnv;
  /** Skip the network request. */
  offline: boolean;
  timeoutMs: number;
  /** The settings file where `summarizer.*` is best changed (shown in fixes). */
  settingsPath: string;
  /** The global settings name `summarizer.model`: only then may `auto` use a model host. */
  userNamedModel: boolean;
  /** The global settings set `summarizer.provider` (no note about the old key-only `auto`). */
  providerSetByUser: boolean;
}

export async function checkSummarizer(settings: Settings["summarizer"], options: SummarizerCheckOptions): Promise<CheckResult> {
  const result = (status: CheckResult["status"], summary: string, fixes: string[] = []): CheckResult => ({
    name: "summarizer",
    status,
    summary,
    fixes,
  });
  const setup = describeSummarizerSetup(settings, options.env, {
    userNamedModel: options.userNamedModel,
    settingsPath: options.settingsPath,
    providerSetByUser: options.providerSetByUser,
  });
  const keyName = settings.apiKeyEnv;
  if (setup.model === undefined) {
    return result(setup.migration ? "warn" : "ok", setup.summary, [...(setup.migration ? [setup.migration] : []), ...setup.hints]);
  }

  const { name: model, endpoint: baseURL } = setup.model;
  // "model M at URL", after "auto: the client's model when it offers one, else" when auto.
  const described = setup.summary.replace(/ \(summarizer\.provider "openai"\)$/, "");
  const fallback = settings.fallback
    ? " Compactions fall back to the extractive summarizer meanwhile."
    : " summarizer.fallback is off: compactions fail meanwhile.";
  const failure = settings.fallback ? "warn" : "fail";
  const key = options.env[keyName];
  if (!key) {
    return result(failure, `${described}: $${keyName} is not set.${fallback}`, [
      `Set $${keyName} in the daemon's environment, or set summarizer.provider to "auto" or "extractive" in ${options.settingsPath}.`,
    ]);
  }
  if (options.offline) return result("skip", `${described}: not contacted (--offline)`);

  let response: Response;
  try {
    response = await fetch(`${baseURL}/models`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    const why =
      error instanceof Error && error.name === "TimeoutError" ? `no answer within ${options.timeoutMs} ms` : describeFetchError(error);
    return result(failure, `${described}: unreachable (${why}).${fallback}`, [
      `Check summarizer.baseURL in ${options.settingsPath} (or $OPENAI_BASE_URL) and that this machine can reach it (proxy, VPN, firewall).`,
      'Or summarize offline: "summarizer": { "provider": "extractive" }.',
    ]);
  }
  if (response.status === 401 || response.status === 403) {
    return result(failure, `${described}: the endpoint refused the key in $${keyName} (HTTP ${response.status}).${fallback}`, [
      `Check $${keyName}: is it a valid key for ${baseURL}?`,
    ]);
  }
  if (response.status === 404) {
    return result("warn", `${described}: reachable, but it does not list models (HTTP 404), so the model was not checked`, [
      `If compactions fail, check summarizer.baseURL (it usually ends in /v1) and summarizer.model in ${options.settingsPath}.`,
    ]);
  }
  if (!response.ok) {
    return result(failure, `${described}: the endpoint answered HTTP ${response.status}.${fallback}`, [
      `Try again later, or check summarizer.baseURL in ${options.settingsPath}.`,
    ]);
  }
  const offered = await modelIds(response);
  if (offered.length > 0 && !offered.includes(model)) {
    return result(failure, `${described}: reachable, but it does not offer ${model}.${fallback}`, [
      `Set summarizer.model in ${options.settingsPath} to one it offers: ${offered.slice(0, LISTED_MODELS).join(", ")}${offered.length > LISTED_MODELS ? ", …" : ""}`,
    ]);
  }
  return result("ok", `${described}: reachable, key accepted${offered.length > 0 ? ", model offered" : ""}`);
}

async function modelIds(response: Response): Promise<string[]> {
  try {
    const body = (await response.json()) as { data?: Array<{ id?: unknown }> };
    return (body.data ?? []).flatMap((model) => (typeof model.id === "string" ? [model.id] : []));
  } catch {
    return [];
  }
}

/** fetch hides the reason (ECONNREFUSED, ENOTFOUND) in `cause`. */
function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
