/**
 * An animated one-line status on stderr for work that takes seconds (a model call). Only on a
 * terminal: piped output and logs get nothing. The timer is unref'd, so a forgotten spinner never
 * keeps the process alive.
 */
import { styleFor, type CliIo } from "./output.js";

export interface Spinner {
  /** Replaces the message next to the spinner. */
  update(message: string): void;
  /** Clears the line. */
  stop(): void;
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const FRAME_MS = 80;
const NO_SPINNER: Spinner = { update: () => undefined, stop: () => undefined };

export function startSpinner(io: CliIo, message: string): Spinner {
  if (io.stderr.isTTY !== true) return NO_SPINNER;
  const style = styleFor(io.stderr, io.env);
  const started = Date.now();
  let text = message;
  let frame = 0;
  const draw = () => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    io.stderr.write(`\r\u001b[2K${style.cyan(FRAMES[frame % FRAMES.length]!)} ${text} ${style.dim(`${seconds}s`)}`);
    frame++;
  };
  draw();
  const timer = setInterval(draw, FRAME_MS);
  timer.unref();
  let stopped = false;
  return {
    update(next) {
      text = next;
      if (!stopped) draw();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      io.stderr.write("\r\u001b[2K");
    },
  };
}
