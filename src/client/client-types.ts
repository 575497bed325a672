import type { z } from "zod";
import type { apiObservationSchema, intentSchema, registrationSchema } from "../core/validation.js";
import type * as Answers from "../http/api-schemas.js";
import type { listQuerySchema as effectListQuery } from "../http/effect-routes.js";
import type { listQuerySchema as intentListQuery } from "../http/intent-routes.js";
import type { eventsQuerySchema, listQuerySchema as jobListQuery } from "../http/job-routes.js";
import type { listQuerySchema as parkedListQuery } from "../http/parked-routes.js";
import type { settlementListQuerySchema } from "../http/settlement-routes.js";
import type * as RunRequests from "../runs/run-validation.js";

/**
 * The client's types, inferred from the zod schemas the server validates requests with and
 * describes its answers with (the same ones /openapi.json is made from). Type-only imports: the
 * client loads neither zod nor anything else of the server at run time.
 */

/** A query as the server reads it, in the client's terms: numbers and booleans, not strings. */
type Query<S extends z.ZodType> = { [K in keyof z.output<S>]?: z.output<S>[K] };

export type {
  Effect,
  Job,
  JobEvent,
  ParkedObservation,
  Problem,
  WebhookAnswer,
} from "../http/api-schemas.js";
// In a file of its own: it holds the intent's schema, which is built on api-schemas.ts's.
export type { EffectPayload } from "../http/effect-payload-schema.js";
export type { AttachedIntent, Intent } from "../http/intent-api-schemas.js";
export type {
  Attempt,
  Claim,
  HeartbeatAnswer,
  Run,
  RunEvent,
  RunWithAttempts,
  WorkerEventAnswer,
} from "../http/run-api-schemas.js";
export type { Settlement, SettlementPage } from "../http/settlement-api-schemas.js";

export type ObservationAnswer = z.output<typeof Answers.observationAnswerSchema>;
export type Page<T> = { items: T[]; nextCursor: string | null };
export type RecordIntentInput = z.input<typeof intentSchema>;
export type ListIntentsQuery = Query<typeof intentListQuery>;

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

export type EnqueueRunInput = z.input<typeof RunRequests.enqueueSchema>;
export type ListRunsQuery = Query<typeof RunRequests.runListQuerySchema>;
export type RunEventsQuery = Query<typeof RunRequests.runEventsQuerySchema>;
export type ClaimInput = Omit<z.input<typeof RunRequests.claimSchema>, "kinds"> & {
  kinds?: readonly string[] | undefined;
};
export type HeartbeatInput = z.input<typeof RunRequests.heartbeatSchema>;
export type WorkerEventInput = z.input<typeof RunRequests.workerEventSchema>;
