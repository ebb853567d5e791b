/**
 * Decisions and artifacts: a structured summarizer. Each compaction gets
 * - a narrative written by the daemon's model through `ctx.complete` (the daemon's own prompt),
 *   or a note that no model was available;
 * - "Decisions" and "Artifacts" sections from a ledger that is kept in the compaction's
 *   `details` and carried over from the previous compaction this plugin made, so nothing
 *   decided or touched early in a long session falls out of the summary.
 */
import { buildSummaryRequest, definePlugin } from "@base-context/plugin-sdk";
import { emptyLedger, formatLedger, previousLedger, record } from "./ledger.js";

export default definePlugin({
  name: "decisions-artifacts",
  apiVersion: 1,
  hooks: {
    async session_before_compact(event, ctx) {
      const { preparation } = event;
      const ledger = previousLedger(event.branchEntries) ?? emptyLedger();
      record(ledger, preparation.messagesToSummarize, preparation.summarizeEntryIds);
      record(ledger, preparation.turnPrefixMessages, preparation.turnPrefixEntryIds);
      ledger.compactions += 1;

      let narrative: string;
      try {
        const request = buildSummaryRequest({
          kind: "history",
          messages: [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages],
          previousSummary: preparation.previousSummary,
          customInstructions: event.customInstructions,
          reserveTokens: preparation.settings.reserveTokens,
        });
        narrative = (await ctx.complete(request)).text.trim();
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        ctx.log("warn", `no narrative (${(error as Error).message}); keeping the ledger only`);
        narrative = "(No model was available for a narrative summary; the ledger below is complete.)";
      }

      return {
        compaction: {
          summary: `${narrative}\n\n${formatLedger(ledger)}`,
          firstKeptEntryId: preparation.firstKeptEntryId,
          tokensBefore: preparation.tokensBefore,
          details: ledger,
        },
      };
    },
  },
});
