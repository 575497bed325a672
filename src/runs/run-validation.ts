import * as z from "zod";
import { boundJsonValue } from "../core/bounded-value.js";
import { RUN_STATUSES } from "../core/run-model.js";
import { jsonSize, LIMITS, queryInteger } from "../core/validation.js";
import { WORKER_EVENT_TYPES } from "./worker-event.js";

/** Request bodies and queries of the runs and worker API. Bounds here are the API's contract. */
export const RUN_LIMITS = {
  kindLength: LIMITS.kindLength,
  workerIdLength: 128,
  idempotencyKeyLength: 256,
  maxAttempts: 100,
  kindsPerClaim: 50,
  minLeaseSeconds: 1,
  maxLeaseSeconds: 3600,
  maxWaitSeconds: 30,
  jsonBytes: LIMITS.resultBytes,
} as const;

// Names that show up in logs, metrics labels and URLs: no spaces, no control characters.
const name = (max: number) =>
  z
    .string()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`)
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/, "must be letters, digits, '_', '.', ':', '/' or '-'");

export const kindSchema = name(RUN_LIMITS.kindLength);
export const workerIdSchema = name(RUN_LIMITS.workerIdLength);

// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

const json = (what: string) =>
  z
    .unknown()
    .optional()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      const size = jsonSize(value);
      if (size === null) ctx.addIssue({ code: "custom", message: `${what} must be JSON-serialisable` });
      else if (size > RUN_LIMITS.jsonBytes)
        ctx.addIssue({
          code: "custom",
          message: `${what} is ${size} bytes; the limit is ${RUN_LIMITS.jsonBytes}`,
          params: { tooLarge: true },
        });
    });

/**
 * What a worker reports (output, error, progress): never refused for its size or depth, so that
 * a finished attempt is never lost for an oversized output. What cannot be stored whole becomes
 * a marked stand-in (`{truncated: true, reason, ...}`, core/bounded-value.ts); the body limit,
 * earlier, bounds the request itself.
 */
const reported = z
  .unknown()
  .optional()
  .transform((value) => boundJsonValue(value, RUN_LIMITS.jsonBytes));

const leaseSeconds = z.number().finite().min(RUN_LIMITS.minLeaseSeconds).max(RUN_LIMITS.maxLeaseSeconds);
const generation = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

export const enqueueSchema = z.strictObject({
  kind: kindSchema,
  input: json("input"),
  idempotencyKey: z
    .string()
    .min(1)
    .max(RUN_LIMITS.idempotencyKeyLength)
    .refine((v) => !CONTROL_CHARS.test(v), "must not contain control characters")
    .optional(),
  maxAttempts: z.number().int().min(1).max(RUN_LIMITS.maxAttempts).optional(),
});

export const claimSchema = z.strictObject({
  kinds: z.array(kindSchema).min(1).max(RUN_LIMITS.kindsPerClaim).optional(),
  waitSeconds: z.number().finite().min(0).max(RUN_LIMITS.maxWaitSeconds).optional(),
  leaseSeconds: leaseSeconds.optional(),
  start: z
    .boolean()
    .describe(
      "true: the claim records the worker's `started` too: the run answers `running`, and the worker sends no `started` of its own (its reports take any sequence)",
    )
    .optional(),
});

export const heartbeatSchema = z.strictObject({
  generation,
  leaseSeconds: leaseSeconds.optional(),
});

/** The claim a worker's end asks for with it (`next`): a claim's body without its wait. */
export const nextClaimSchema = z
  .strictObject({
    kinds: claimSchema.shape.kinds,
    leaseSeconds: claimSchema.shape.leaseSeconds,
    start: claimSchema.shape.start,
  })
  .describe(
    "with an end (succeeded, failed, cancelled) only: claim this worker's next run in the same transaction, answered as `next` (a retried end answers the claim its first call made, while it holds)",
  );

export const workerEventSchema = z.strictObject({
  generation,
  sequence: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  type: z.enum(WORKER_EVENT_TYPES),
  output: reported,
  error: reported,
  progress: reported,
  next: nextClaimSchema.optional(),
});

export const runListQuerySchema = z.strictObject({
  status: z.enum(RUN_STATUSES).optional(),
  kind: kindSchema.optional(),
  limit: queryInteger(1, 500).optional(),
  cursor: z.string().min(1).max(200).optional(),
});

export const runEventsQuerySchema = z.strictObject({
  after: queryInteger(0, Number.MAX_SAFE_INTEGER).optional(),
  limit: queryInteger(1, 10_000).optional(),
});
