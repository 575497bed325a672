export { PROVIDER_TYPES, type ProviderType } from "./config/provider-config-schema.js";
// The `finality` entry: the engine, the providers and the webhook schemes, and their types.
export { type Clock, manualClock, type Random, seededRandom, systemClock } from "./core/clock.js";
export { type ErrorCode, FinalityError, isFinalityError } from "./core/errors.js";
export {
  type AttachedBy,
  type Intent,
  type IntentStatus,
  intentStatus,
  intentToJson,
} from "./core/intent-model.js";
export type {
  Effect,
  EffectStatus,
  IgnoreReason,
  Job,
  JobEvent,
  JobKey,
  Observation,
  UnknownJobPolicy,
} from "./core/model.js";
export { type ReduceResult, reduce } from "./core/reducer.js";
export {
  type Attempt,
  type AttemptStatus,
  DEFAULT_MAX_UNSTARTED_RELEASES,
  LEASE_EXPIRED_BEFORE_START_CODE,
  LEASE_EXPIRED_CODE,
  RUNS_PROVIDER,
  type Run,
  type RunEvent,
  type RunStatus,
} from "./core/run-model.js";
export {
  CANONICAL_STATES,
  type CanonicalState,
  isTerminal,
  rankOf,
  type Source,
  TERMINAL_STATES,
} from "./core/states.js";
export type { ObservationInput, RegistrationInput } from "./core/validation.js";
export { DeliveryError } from "./engine/delivery-error.js";
export { createDispatcher, type Dispatcher, type DispatcherOptions } from "./engine/dispatcher.js";
export { replayEffects, retryEffect } from "./engine/effect-admin.js";
export type { EffectDefinition, EffectDelivery } from "./engine/effect-definitions.js";
export { type Finality, type FinalityOptions, finalityOn, type ProviderPolicy } from "./engine/finality.js";
export { createHttpEffectDeliverer } from "./engine/http-effect-target.js";
export type { IngestOutcome, RegisterOutcome } from "./engine/ingest.js";
export type { IntentApi, SubmitCall, SubmitFn } from "./engine/intent-api.js";
export type { AttachOutcome, RecordIntentOutcome } from "./engine/intents.js";
export type { Poller, PollResult } from "./engine/poller.js";
export {
  createReconciler,
  type ProviderReconcileOptions,
  type Reconciler,
  type ReconcilerOptions,
} from "./engine/reconciler.js";
export {
  createRetentionLoop,
  DEFAULT_RETENTION,
  type PruneCounts,
  type PruneOptions,
  pruneOnce,
  type RetentionLoop,
  type RetentionWindows,
} from "./engine/retention.js";
export {
  type FollowOptions,
  followSettlements,
  readSettlementsWaiting,
  settlementToJson,
} from "./engine/settlement-stream.js";
export type * from "./exports/effect-target-types.js";
// The webhook schemes and the provider registry, also the `finality/webhooks` entry.
export * from "./exports/webhooks.js";
export type { AdapterDeps, ProviderAdapter } from "./providers/adapter-types.js";
export { createAnthropicAdapter } from "./providers/anthropic/anthropic-adapter.js";
export { createProviderAdapter } from "./providers/create-provider-adapter.js";
export { type SweepOptions, type SweepResult, sweepOnce } from "./providers/discovery-sweep.js";
export type { JobLister, ListedJob, ListQuery, ListResult } from "./providers/discovery-types.js";
export { createGeminiAdapter } from "./providers/gemini/gemini-adapter.js";
export { createGenericAdapter } from "./providers/generic/generic-adapter.js";
export { createGenericLister } from "./providers/generic/generic-lister.js";
export {
  createGenericPoller,
  type GenericPaths,
  type GenericPollOptions,
} from "./providers/generic/generic-poller.js";
export { createOpenAIAdapter } from "./providers/openai/openai-adapter.js";
export {
  type AuthFailure,
  createProviderHealth,
  type ProviderHealth,
  providerHealth,
} from "./providers/provider-health.js";
export { createReplicateAdapter } from "./providers/replicate/replicate-adapter.js";
export { mapState, type StateTable } from "./providers/state-map.js";
export {
  decideLeaseExpiry,
  LEASE_EXPIRY_OUTCOMES,
  type LeaseExpiryOutcome,
} from "./runs/lease-expiry-rules.js";
export {
  createLeaseSweeper,
  type LeaseSweeper,
  type LeaseSweeperOptions,
} from "./runs/lease-sweeper-loop.js";
export {
  type ClaimOptions,
  createRunService,
  type EnqueueRequest,
  type RunService,
  type RunServiceOptions,
  type RunWithAttempts,
} from "./runs/run-service.js";
export type { RunRetryPolicy } from "./runs/run-transitions.js";
export type { WorkerEvent, WorkerEventType } from "./runs/worker-event.js";
export type { PruneTarget } from "./store/housekeeping-store.js";
// The stores are entries of their own (`finality/sqlite`, `finality/postgres`): importing
// `finality` loads no database driver. Their types stay here, erased at run time.
export type { PostgresStore, PostgresStoreOptions } from "./store/postgres/postgres-store.js";
export type { DueLease, RunPage, RunQuery, RunStore, RunStoreTx } from "./store/run-store.js";
export type {
  Settlement,
  SettlementPage,
  SettlementQuery,
  SettlementReads,
} from "./store/settlement-feed.js";
export type { SqliteStoreOptions } from "./store/sqlite/sqlite-store.js";
export type { EffectQuery, JobQuery, Page, Store, StoreTx } from "./store/store.js";
