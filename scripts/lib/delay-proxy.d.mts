/** Types of delay-proxy.mjs (used by the TypeScript test support). */
export interface DelayProxy {
  host: string;
  port: number;
  delayMs: number;
  /** `url` with its host and port replaced by the proxy's. */
  url(of: string): string;
  stop(): Promise<void>;
}
export function startDelayProxy(target: { host: string; port: number }, delayMs?: number): Promise<DelayProxy>;
export function postgresTarget(url: string): { host: string; port: number };
