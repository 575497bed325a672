import type { z } from "zod";
import type { apiObservationSchema, intentSchema, registrationSchema } from "../core/validation.js";
import type * as Answers from "../http/api-schemas.js";
import type { listQuerySchema as effectListQuery } from "../http/effect-routes.js";
import type * as IntentAnswers from "../http/intent-api-schemas.js";
import type { listQuerySchema as intentListQuery } from "../http/intent-routes.js";
import type { eventsQuerySchema, listQuerySchema as jobListQuery } from "../http/job-routes.js";
import type { listQuerySchema as parkedListQuery } from "../http/parked-routes.js";
import type * as RunAnswers from "../http/run-api-schemas.js";
import type * as SettlementAnswers from "../http/settlement-api-schemas.js";
import type { settlementListQuerySchema } from "../http/settlement-routes.js";
import type {
  claimSchema,
  enqueueSchema,
  heartbeatSchema,
  runEventsQuerySchema,
  runListQuerySchema,
  workerEventSchema,
} from "../runs/run-validation.js";

/**
 * The client's types, inferred from the zod schemas the server validates requests with and
 * describes its answers with (the same ones /openapi.json is made from). Type-only imports: the
 * client loads neither zod nor anything else of the server at run time.
 */

/** A query as the server reads it, in the client's terms: numbers and booleans, not strings. */
type Query<S extends z.ZodType> = { [K in keyof z.output<S>]?: z.output<S>[K] };

export type Job = Answers.Job;
export type JobEvent = Answers.JobEvent;
export type Effect = Answers.Effect;
export type ParkedObservation = Answers.ParkedObservation;
export type Problem = Answers.Problem;
export type EffectPayload = Answers.EffectPayload;
export type WebhookAnswer = Answers.WebhookAnswer;
export type ObservationAnswer = z.output<typeof Answers.observationAnswerSchema>;
export type Page<T> = { items: T[]; nextCursor: string | null };
export type Settlement = SettlementAnswers.Settlement;
export type SettlementPage = SettlementAnswers.SettlementPage;

export type Intent = IntentAnswers.Intent;
export type AttachedIntent = IntentAnswers.AttachedIntent;
export type RecordIntentInput = z.input<typeof intentSchema>;
export type ListIntentsQuery = Query<typeof intentListQuery>;

export type Run = RunAnswers.Run;
export type Attempt = RunAnswers.Attempt;
export type RunWithAttempts = RunAnswers.RunWithAttempts;
export type RunEvent = RunAnswers.RunEvent;
export type Claim = RunAnswers.Claim;
export type HeartbeatAnswer = RunAnswers.HeartbeatAnswer;
export type WorkerEventAnswer = RunAnswers.WorkerEventAnswer;

export type RegisterJobInput = z.input<typeof registrationSchema>;
export type ObserveJobInput = z.input<typeof apiObservationSchema>;
export type ListJobsQuery = Query<typeof jobListQuery>;
export type JobEventsQuery = Query<typeof eventsQuerySchema>;
export type ListEffectsQuery = Query<typeof effectListQuery>;
export type ListParkedQuery = Query<typeof parkedListQuery>;
/** `after` is a cursor from an earlier answer; `wait` (seconds, ≤ 60) makes the read a long poll. */
export type ListSettlementsQuery = Query<typeof settlementListQuerySchema>;
/** What `followSettlements` reads: the feed after `after`, one long poll of `waitSeconds` at a time. */
export type FollowSettlementsQuery = Omit<ListSettlementsQuery, "wait"> & {
  /** Each long poll's wait (default 30, at most 60). */
  waitSeconds?: number | undefined;
  /** Ends the iteration (quietly, not with an error), even in the middle of a long poll. */
  signal?: AbortSignal | undefined;
};

export type EnqueueRunInput = z.input<typeof enqueueSchema>;
export type ListRunsQuery = Query<typeof runListQuerySchema>;
export type RunEventsQuery = Query<typeof runEventsQuerySchema>;
export type ClaimInput = Omit<z.input<typeof claimSchema>, "kinds"> & {
  kinds?: readonly string[] | undefined;
};
export type HeartbeatInput = z.input<typeof heartbeatSchema>;
export type WorkerEventInput = z.input<typeof workerEventSchema>;
