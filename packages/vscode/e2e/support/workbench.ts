/**
 * Driving VS Code's workbench in a real Chromium (Debian's, through playwright-core): the command
 * palette, quick inputs, the views' rows (found by the accessible labels the extension gives
 * them), notifications, the status bar, the editor's text, screenshots. Every wait is for
 * something to appear in the page, never for time to pass.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";

/** Debian's chromium (its launcher script); BASE_CONTEXT_CHROMIUM names another. */
export const CHROMIUM = process.env.BASE_CONTEXT_CHROMIUM ?? "/usr/bin/chromium";

const LAUNCH_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * A headless Chromium with a fresh profile in `folder` (its HOME too: Chromium writes its crash
 * database and caches under HOME otherwise).
 */
export async function launchChromium(folder: string): Promise<{ browser: Browser; page: Page; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's (apt-get install -y chromium), as .ci/run does, or set BASE_CONTEXT_CHROMIUM`);
  }
  const home = join(folder, "home");
  mkdirSync(home, { recursive: true });
  const context = await chromium.launchPersistentContext(join(folder, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: LAUNCH_FLAGS,
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_CACHE_HOME: join(home, ".cache") },
    timeout: 120_000,
    viewport: { width: 1440, height: 900 },
    deviceScaleFactor: 1,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // A step that waits longer than this for something to appear has failed.
  page.setDefaultTimeout(60_000);
  return { browser: context.browser()!, page, close: () => context.close() };
}

export class Workbench {
  private shots = 0;

  constructor(
    readonly page: Page,
    private readonly artefacts: string,
  ) {
    mkdirSync(artefacts, { recursive: true });
  }

  async open(url: string, folder: string): Promise<void> {
    await this.page.goto(`${url}?folder=${encodeURIComponent(folder)}`);
    await this.page.locator(".monaco-workbench").waitFor({ timeout: 120_000 });
  }

  /** Runs a command from the palette by its full title ("Base Context: Compact Now…"). */
  async runCommand(title: string): Promise<void> {
    await this.closeQuickInput();
    await this.page.keyboard.press("F1");
    const input = this.quickInputBox();
    await input.waitFor();
    await input.fill(`>${title}`);
    // Clicked, not Enter: the palette may still highlight a recently used command while it filters.
    const row = this.page.locator(".quick-input-widget .monaco-list-row", { hasText: new RegExp(`^${escapeRegExp(title)}`) }).first();
    await row.click();
  }

  /** The quick input's text box (palette, input box, quick pick). */
  quickInputBox(): Locator {
    return this.page.locator(".quick-input-widget .quick-input-box input");
  }

  /** Waits for an input box or quick pick whose title, prompt or placeholder matches `pattern`, types `value` and accepts. */
  async answer(pattern: RegExp, value: string): Promise<void> {
    await this.waitForQuickInput(pattern);
    const input = this.quickInputBox();
    await input.fill(value);
    await input.press("Enter");
  }

  /** Waits until the quick input shows, saying something that matches `pattern` (title, prompt or placeholder). */
  async waitForQuickInput(pattern: RegExp, timeout = 60_000): Promise<void> {
    await this.page.waitForFunction(
      ({ source, flags }) => {
        const widget = document.querySelector(".quick-input-widget") as HTMLElement | null;
        const input = widget?.querySelector(".quick-input-box input") as HTMLInputElement | null;
        // Shown and ready to type in: the widget is laid out, its text box too.
        if (!widget || !input || getComputedStyle(widget).display === "none" || input.getBoundingClientRect().width === 0) return false;
        const regex = new RegExp(source, flags);
        return regex.test(widget.textContent ?? "") || regex.test(input?.placeholder ?? "") || regex.test(input?.getAttribute("aria-label") ?? "");
      },
      { source: pattern.source, flags: pattern.flags },
      { timeout },
    );
  }

  /**
   * Answers VS Code's own file dialog (the "simple" one a browser gets: a quick input listing a
   * folder) with a file's full path. The dialog fills in its starting folder by itself once it has
   * read it, which can overwrite a path typed too early: so the path is typed once the dialog lists
   * a folder, accepted once the dialog shows that file, and typed again if the dialog replaced it.
   */
  async chooseFile(path: string): Promise<void> {
    const input = this.quickInputBox();
    const rows = this.page.locator(".quick-input-widget .monaco-list-row");
    const name = path.split("/").pop()!;
    const deadline = Date.now() + 60_000;
    await rows.first().waitFor();
    for (;;) {
      await input.fill(path);
      const shown = await rows
        .filter({ hasText: name })
        .first()
        .waitFor({ timeout: 5000 })
        .then(() => true, () => false);
      if (shown && (await input.inputValue()) === path) {
        await input.press("Enter");
        const closed = await this.page
          .locator(".quick-input-widget")
          .waitFor({ state: "hidden", timeout: 5000 })
          .then(() => true, () => false);
        if (closed) return;
      }
      if (Date.now() > deadline) throw new Error(`the file dialog did not take ${path}; it shows ${await input.inputValue()}`);
    }
  }

  /** Picks the row of the open quick pick that shows `label`, after typing `filter` into it. */
  async pick(filter: string, label: string | RegExp): Promise<void> {
    const input = this.quickInputBox();
    await input.waitFor();
    await input.fill(filter);
    const row = this.page.locator(".quick-input-widget .monaco-list-row", { hasText: label }).first();
    await row.waitFor();
    await row.click();
  }

  async closeQuickInput(): Promise<void> {
    if (await this.page.locator(".quick-input-widget").isVisible()) await this.page.keyboard.press("Escape");
  }

  /** The Base Context container in the activity bar. */
  async showBaseContext(): Promise<void> {
    const button = this.page.locator('.activitybar [aria-label="Base Context"]').first();
    await button.waitFor();
    const pane = this.view("Sessions");
    if (!(await pane.isVisible())) await button.click();
    await pane.waitFor();
  }

  /** A view's pane (its header and body) by the view's name. */
  view(name: string): Locator {
    return this.page.locator(".pane", { has: this.page.locator(`.pane-header[aria-label^="${name}"]`) });
  }

  /** The accessible labels of a view's rows now shown. */
  async rowLabels(view: string): Promise<string[]> {
    return this.view(view)
      .locator(".monaco-list-row")
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("aria-label") ?? row.textContent ?? ""));
  }

  /** Waits until some row of `view` has an accessible label matching `pattern`; returns that label. */
  async waitForRow(view: string, pattern: RegExp, timeout = 60_000): Promise<string> {
    const handle = await this.page.waitForFunction(
      ({ viewName, source, flags }) => {
        const regex = new RegExp(source, flags);
        for (const pane of Array.from(document.querySelectorAll(".pane"))) {
          const header = pane.querySelector(".pane-header");
          if (!header?.getAttribute("aria-label")?.startsWith(viewName)) continue;
          for (const row of Array.from(pane.querySelectorAll(".monaco-list-row"))) {
            const label = row.getAttribute("aria-label") ?? "";
            if (regex.test(label)) return label;
          }
        }
        return undefined;
      },
      { viewName: view, source: pattern.source, flags: pattern.flags },
      { timeout },
    );
    return (await handle.jsonValue()) as string;
  }

  /** Clicks the row of `view` whose accessible label matches. */
  async clickRow(view: string, pattern: RegExp): Promise<void> {
    const label = await this.waitForRow(view, pattern);
    await this.view(view).locator(`.monaco-list-row[aria-label="${cssString(label)}"]`).first().click();
  }

  /** Waits for a notification toast whose text matches; returns its text. */
  async waitForNotification(pattern: RegExp, timeout = 120_000): Promise<string> {
    const toast = this.page.locator(".notifications-toasts .notification-toast", { hasText: pattern }).first();
    await toast.waitFor({ timeout });
    return normalize((await toast.textContent()) ?? "");
  }

  async clearNotifications(): Promise<void> {
    await this.runCommand("Notifications: Clear All Notifications");
  }

  /** The text of the status-bar item whose accessible label starts with `prefix`. */
  async waitForStatus(pattern: RegExp, timeout = 60_000): Promise<string> {
    const item = this.page.locator(".statusbar-item", { hasText: pattern }).first();
    await item.waitFor({ timeout });
    return normalize((await item.textContent()) ?? "");
  }

  /** The text of the active editor's rendered lines, top to bottom, one per line. */
  async editorText(): Promise<string> {
    await this.page.locator(".editor-instance .monaco-editor .view-lines").first().waitFor();
    return this.page.evaluate(renderedLines);
  }

  /** Waits until the active editor shows text matching `pattern`; returns that text. */
  async waitForEditorText(pattern: RegExp, timeout = 60_000): Promise<string> {
    const deadline = Date.now() + timeout;
    for (;;) {
      const text = await this.page.evaluate(renderedLines).catch(() => "");
      if (pattern.test(text)) return text;
      if (Date.now() > deadline) throw new Error(`the editor never showed ${pattern} within ${timeout} ms; it shows:\n${text.slice(0, 2000)}`);
      await this.page.waitForTimeout(100);
    }
  }

  /** A screenshot kept as a test artefact: `<n>-<name>.png`. */
  async screenshot(name: string): Promise<string> {
    const path = join(this.artefacts, `${String(++this.shots).padStart(2, "0")}-${name}.png`);
    await this.page.screenshot({ path });
    return path;
  }
}

function normalize(text: string): string {
  return text.replace(/\u00a0/g, " ");
}

function cssString(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
}

/**
 * Runs in the page: Monaco draws each line as a positioned `.view-line` (not in document order once
 * it scrolls); they are put in order by their top and joined with newlines, non-breaking spaces as spaces.
 */
function renderedLines(): string {
  const editor = document.querySelector(".editor-instance .monaco-editor .view-lines");
  const lines = Array.from(editor?.querySelectorAll<HTMLElement>(".view-line") ?? []);
  lines.sort((a, b) => Number.parseFloat(a.style.top) - Number.parseFloat(b.style.top));
  return lines.map((line) => (line.textContent ?? "").replace(/\u00a0/g, " ")).join("\n");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
