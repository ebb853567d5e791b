import { z } from "zod";
import { notification, request } from "../declare.js";
import { SessionEntry } from "../entries.js";
import { RequestId } from "./sessions.js";

export const TreeNavigate = request(
  "tree/navigate",
  z.object({
    sessionId: z.string().min(1),
    targetId: z.string().min(1),
    summarize: z.boolean().default(false),
    customInstructions: z.string().optional(),
    replaceInstructions: z.boolean().optional(),
    label: z.string().min(1).optional(),
    contextWindow: z.number().int().positive().optional(),
    requestId: RequestId.optional(),
    workDoneToken: z.union([z.string(), z.number()]).optional(),
  }),
  z.object({
    status: z.enum(["moved", "unchanged", "cancelled"]),
    leafId: z.string().nullable(),
    summaryEntry: SessionEntry.optional(),
    editorText: z.string().optional(),
  }),
);

export const TreeDidNavigate = notification(
  "tree/didNavigate",
  z.object({ sessionId: z.string(), oldLeafId: z.string().nullable(), leafId: z.string().nullable(), summaryEntryId: z.string().optional() }),
);
