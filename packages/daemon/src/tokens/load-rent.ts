/**
 * When to load the encoding on the calling thread: a rent-or-buy (ski rental) decision.
 *
 * Until the encoding is loaded on the calling thread, every small count goes to the worker and
 * its caller waits for the round trip (an append over stdio: ~0.8 ms instead of ~0.4 ms). That is
 * the rent. Loading the encoding here is the purchase: one stall of this thread of about as long
 * as the worker took to load its own copy (~0.35–0.4 s on an idle core, mostly V8 compiling
 * gpt-tokenizer's rank table), after which small counts cost no round trip.
 *
 * Nobody knows in advance whether more appends will come, so the rule is the break-even one:
 * rent until the rent paid adds up to the purchase price, then buy. Whatever the client does
 * next, that never costs more than twice the best choice made with hindsight (2-competitive): a
 * client that stops early has paid at most the price in rent (never buying would have cost the
 * same), and one that goes on has paid the rent plus the price, at most twice the price (buying
 * at the start would have cost the price). A daemon that pauses for a second buys earlier
 * anyway (serve-background.ts); this rule is for clients that never pause: a burst, an import
 * tool, a bench.
 *
 * The rent is the wall-clock time during which at least one count that the calling thread could
 * have done itself was waiting for the worker: one client appending in a loop pays each round
 * trip, and appends that wait together share one, just as they would all wait out the one stall.
 * Counting it costs two clock reads per count and no allocation.
 */
export class LoadRent {
  /** Counts waiting for the worker right now, and since when at least one has been. */
  private waiting = 0;
  private waitingSince = 0;
  private paidMs = 0;
  private paidOff = false;
  private paidOffPromise: Promise<void> | undefined;
  private resolvePaidOff: (() => void) | undefined;

  /**
   * @param priceMs what loading the encoding on the calling thread would cost, asked when the
   *   rent is compared with it (the estimate may improve once the worker has loaded its copy)
   * @param now the clock (tests pass a fake one)
   */
  constructor(
    private readonly priceMs: () => number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A count the calling thread could have done starts waiting for the worker. */
  begin(): void {
    if (this.waiting++ === 0) this.waitingSince = this.now();
  }

  /** That count is answered (or failed). */
  end(): void {
    if (--this.waiting > 0) return;
    this.paidMs += this.now() - this.waitingSince;
    if (!this.paidOff && this.paidMs >= this.priceMs()) {
      this.paidOff = true;
      this.resolvePaidOff?.();
    }
  }

  /** Rent paid so far, in ms. */
  get rentMs(): number {
    return this.paidMs;
  }

  /** Resolves once the rent paid has reached the price: time to buy. */
  whenPaidOff(): Promise<void> {
    this.paidOffPromise ??= this.paidOff
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          this.resolvePaidOff = resolve;
        });
    return this.paidOffPromise;
  }
}
