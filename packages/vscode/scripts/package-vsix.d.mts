/** Types of package-vsix.mjs, for the editor test's setup. */
export declare const VSCE_VERSION: string;
export declare function ensureVsce(): string;
export declare function packageVsix(out?: string): string;
