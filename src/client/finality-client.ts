import type {
  AttachedIntent,
  Claim,
  ClaimInput,
  Effect,
  EnqueueRunInput,
  FollowSettlementsQuery,
  HeartbeatAnswer,
  HeartbeatInput,
  Intent,
  Job,
  JobEvent,
  JobEventsQuery,
  ListEffectsQuery,
  ListIntentsQuery,
  ListJobsQuery,
  ListParkedQuery,
  ListRunsQuery,
  ListSettlementsQuery,
  ObservationAnswer,
  ObserveJobInput,
  Page,
  ParkedObservation,
  RecordIntentInput,
  RegisterJobInput,
  Run,
  RunEvent,
  RunEventsQuery,
  RunWithAttempts,
  Settlement,
  SettlementPage,
  WorkerEventAnswer,
  WorkerEventInput,
} from "./client-types.js";
import { type Call, type CallOptions, createCaller, FinalityClientError } from "./http-call.js";

/** The server's longest `?wait=` on a job, in seconds (http/job-routes.ts MAX_JOB_WAIT_SECONDS). */
const MAX_JOB_WAIT_SECONDS = 60;

export interface FinalityClientOptions extends CallOptions {}

/**
 * A typed client for Finality's HTTP API (the `/v1` API with the API token) and its worker API
 * (with a worker pool token: make one client per token). Each method is one operation of
 * /openapi.json; a failure throws a FinalityClientError.
 */
export interface FinalityClient {
  /** `POST /v1/jobs`: `created` is false when the job was known (its state never changes). */
  registerJob(job: RegisterJobInput): Promise<{ created: boolean; job: Job }>;
  /** `GET /v1/jobs/{provider}/{id}` (an id may hold `/`). */
  getJob(provider: string, id: string): Promise<Job>;
  /**
   * The job once it has settled: repeated `GET /v1/jobs/{provider}/{id}?wait=` (at most 60 s each)
   * until it has, or until `timeoutMs` (60,000) in all, which throws a FinalityClientError of kind
   * `wait-timeout` (`retryable`). An aborted `signal` throws its reason; any failure of a call
   * (unreachable, a 404) is thrown as it is.
   */
  waitForJob(
    provider: string,
    id: string,
    options?: { timeoutMs?: number; signal?: AbortSignal },
  ): Promise<Job>;
  listJobs(query?: ListJobsQuery): Promise<Page<Job>>;
  listJobEvents(provider: string, id: string, query?: JobEventsQuery): Promise<{ items: JobEvent[] }>;
  /** `POST .../observations`; an `idempotencyKey` makes a retried call a `duplicate-delivery`. */
  observeJob(
    provider: string,
    id: string,
    observation: ObserveJobInput,
    options?: { idempotencyKey?: string },
  ): Promise<ObservationAnswer>;
  replayJobEffects(provider: string, id: string): Promise<{ items: Effect[] }>;
  listEffects(query?: ListEffectsQuery): Promise<Page<Effect>>;
  retryEffect(id: string): Promise<Effect>;
  listParked(query?: ListParkedQuery): Promise<Page<ParkedObservation>>;
  /**
   * `GET /v1/settlements`: the settlements after `query.after` in commit order; pass the answer's
   * `cursor` back as `after`. With `wait` (seconds) a long poll: the timeout waits that much more.
   */
  listSettlements(query?: ListSettlementsQuery, options?: { signal?: AbortSignal }): Promise<SettlementPage>;
  /**
   * Every settlement after `query.after`, then each new one as it commits: repeated long polls of
   * `listSettlements` (not the SSE stream: plain requests, no stream parsing). Resume
   * after a failure with the last item's `cursor` as `after`: nothing is missed or repeated. Ends
   * when `query.signal` aborts; any other failure is thrown (a FinalityClientError).
   */
  followSettlements(query?: FollowSettlementsQuery): AsyncGenerator<Settlement, void, undefined>;
  /**
   * The library's `finality.settlements({ after, provider, kind, signal })` over HTTP, so that
   * code written for one reads the feed through the other: `followSettlements` under that name.
   */
  settlements(query?: FollowSettlementsQuery): AsyncGenerator<Settlement, void, undefined>;

  /** `POST /v1/intents`: `created` is false for the same body again (another body is a 409). */
  recordIntent(intent: RecordIntentInput): Promise<{ created: boolean; intent: Intent }>;
  getIntent(key: string): Promise<Intent>;
  listIntents(query?: ListIntentsQuery): Promise<{ items: Intent[] }>;
  /** `POST /v1/intents/{key}/attach`: registers the job under the intent's kind and metadata. */
  attachIntent(key: string, id: string): Promise<AttachedIntent>;

  /** `POST /v1/runs`: `created` is false for a repeated `idempotencyKey`. */
  enqueueRun(run: EnqueueRunInput): Promise<{ created: boolean; run: RunWithAttempts }>;
  getRun(id: string): Promise<RunWithAttempts>;
  listRuns(query?: ListRunsQuery): Promise<Page<Run>>;
  listRunEvents(id: string, query?: RunEventsQuery): Promise<{ items: RunEvent[] }>;
  cancelRun(id: string): Promise<RunWithAttempts>;

  /** Worker API: a run and its lease, or null when none came within `waitSeconds`. */
  claimRun(workerId: string, claim?: ClaimInput, options?: { signal?: AbortSignal }): Promise<Claim | null>;
  heartbeat(attemptId: string, heartbeat: HeartbeatInput): Promise<HeartbeatAnswer>;
  reportAttemptEvent(attemptId: string, event: WorkerEventInput): Promise<WorkerEventAnswer>;

  health(): Promise<{ status: "ok" }>;
  ready(): Promise<{ status: "ready" }>;
}

const part = encodeURIComponent;
const jobPath = (provider: string, id: string) => `/v1/jobs/${part(provider)}/${part(id)}`;

export function createFinalityClient(options: FinalityClientOptions): FinalityClient {
  const send = createCaller(options);
  /** The answer's body; these operations always have one. */
  const body = async <T>(call: Call): Promise<T> => (await send<T>(call)).body as T;
  const get = <T>(path: string, query?: Call["query"]) => body<T>({ method: "GET", path, query });
  const post = <T>(path: string, payload?: unknown, headers?: Record<string, string>) =>
    body<T>({ method: "POST", path, body: payload, headers });

  const listSettlements: FinalityClient["listSettlements"] = (query = {}, opts = {}) =>
    body({
      method: "GET",
      path: "/v1/settlements",
      query,
      signal: opts.signal,
      extraWaitMs: (query.wait ?? 0) * 1000,
    });

  const waitForJob: FinalityClient["waitForJob"] = async (provider, id, opts = {}) => {
    const { timeoutMs = 60_000, signal } = opts;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      signal?.throwIfAborted();
      const left = Math.max(0, deadline - Date.now());
      const wait = Math.min(MAX_JOB_WAIT_SECONDS, Math.floor(left / 1000));
      const job = await body<Job>({
        method: "GET",
        path: jobPath(provider, id),
        query: { wait },
        signal,
        extraWaitMs: wait * 1000,
      });
      if (job.settledAt !== null) return job;
      // The server waits whole seconds: with less than one left, the wait is over.
      if (deadline - Date.now() < 1000) {
        throw new FinalityClientError(
          `${provider}/${id} did not settle within ${timeoutMs} ms (it is ${job.state})`,
          "wait-timeout",
          200,
          null,
        );
      }
    }
  };

  async function* followSettlements(query: FollowSettlementsQuery = {}) {
    const { waitSeconds = 30, signal, ...filter } = query;
    let after = filter.after;
    while (!signal?.aborted) {
      let page: SettlementPage;
      try {
        page = await listSettlements({ ...filter, after, wait: waitSeconds }, { signal });
      } catch (error) {
        if (signal?.aborted) return;
        throw error;
      }
      for (const settlement of page.items) {
        if (signal?.aborted) return;
        after = settlement.cursor;
        yield settlement;
      }
      after = page.cursor ?? after;
    }
  }

  return {
    async registerJob(job) {
      const answer = await send<Job>({ method: "POST", path: "/v1/jobs", body: job });
      return { created: answer.status === 201, job: answer.body as Job };
    },
    getJob: (provider, id) => get(jobPath(provider, id)),
    waitForJob,
    listJobs: (query) => get("/v1/jobs", query),
    listJobEvents: (provider, id, query) => get(`${jobPath(provider, id)}/events`, query),
    observeJob: (provider, id, observation, opts) =>
      post(
        `${jobPath(provider, id)}/observations`,
        observation,
        opts?.idempotencyKey === undefined ? undefined : { "idempotency-key": opts.idempotencyKey },
      ),
    replayJobEffects: (provider, id) => post(`${jobPath(provider, id)}/replay-effects`),
    listEffects: (query) => get("/v1/effects", query),
    retryEffect: (id) => post(`/v1/effects/${part(id)}/retry`),
    listParked: (query) => get("/v1/parked", query),
    listSettlements,
    followSettlements,
    settlements: followSettlements,

    async recordIntent(intent) {
      const answer = await send<Intent>({ method: "POST", path: "/v1/intents", body: intent });
      return { created: answer.status === 201, intent: answer.body as Intent };
    },
    getIntent: (key) => get(`/v1/intents/${part(key)}`),
    listIntents: (query) => get("/v1/intents", query),
    attachIntent: (key, id) => post(`/v1/intents/${part(key)}/attach`, { id }),

    async enqueueRun(run) {
      const answer = await send<RunWithAttempts>({ method: "POST", path: "/v1/runs", body: run });
      return { created: answer.status === 201, run: answer.body as RunWithAttempts };
    },
    getRun: (id) => get(`/v1/runs/${part(id)}`),
    listRuns: (query) => get("/v1/runs", query),
    listRunEvents: (id, query) => get(`/v1/runs/${part(id)}/events`, query),
    cancelRun: (id) => post(`/v1/runs/${part(id)}/cancel`),

    async claimRun(workerId, claim = {}, opts = {}) {
      const answer = await send<Claim>({
        method: "POST",
        path: `/v1/workers/${part(workerId)}/claim`,
        body: claim,
        signal: opts.signal,
        extraWaitMs: (claim.waitSeconds ?? 0) * 1000,
      });
      return answer.status === 204 ? null : answer.body;
    },
    heartbeat: (attemptId, heartbeat) => post(`/v1/attempts/${part(attemptId)}/heartbeat`, heartbeat),
    reportAttemptEvent: (attemptId, event) => post(`/v1/attempts/${part(attemptId)}/events`, event),

    health: () => get("/healthz"),
    ready: () => get("/readyz"),
  };
}
