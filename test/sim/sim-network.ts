import { isFinalityError } from "../../src/core/errors.js";
import { isRevokedAttempt } from "../../src/core/run-model.js";
import { PROBLEM_STATUS } from "../../src/http/problem-status.js";
import { signStandardWebhook } from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { engineOf } from "../helpers/engine.js";
import { noteOutcome } from "./sim-late.js";
import { payloadMember } from "./sim-payload.js";
import { observedFields, type ProviderJob } from "./sim-provider.js";
import { SECRET, SIM, SimCrash } from "./sim-types.js";
import { InvariantViolation, type Message, type SimWorld } from "./sim-world.js";

/**
 * The provider's webhook sender: every timeline step that has happened is handed to the network
 * once (or never, or twice under two delivery ids, as its plan says), signed when it is sent.
 */
export function emitWebhooks(world: SimWorld): void {
  const now = world.now();
  for (const job of world.truth.jobs.values()) {
    const timeline = job.plan.timeline;
    while (job.emitted < timeline.length && job.createdAt + timeline[job.emitted]!.afterMs <= now) {
      const index = job.emitted++;
      const step = timeline[index]!;
      const base = `wh_${job.plan.provider}_${job.plan.id}_${index + 1}`;
      if (step.sender === "never-sent") {
        world.count("webhook-never-sent");
        continue;
      }
      const fields = observedFields(job, index, world.skewMs);
      if (job.plan.progressAfterEnd && index === timeline.length - 1)
        progressAfterEnd(world, job, base, fields);
      const ids = step.sender === "sent-twice" ? [base, `${base}_again`] : [base];
      if (ids.length > 1) world.count("webhook-sent-twice");
      for (const deliveryId of ids) {
        world.network.push({
          kind: "webhook",
          provider: job.plan.provider,
          jobId: job.plan.id,
          deliveryId,
          state: step.state,
          fields,
          attempts: 0,
          dueAt: now,
        });
      }
    }
  }
}

/** The progress webhook a provider numbers after the completion, handed to the network first. */
function progressAfterEnd(
  world: SimWorld,
  job: ProviderJob,
  base: string,
  fields: ReturnType<typeof observedFields>,
): void {
  world.count("progress-after-completion");
  world.network.push({
    kind: "webhook",
    provider: job.plan.provider,
    jobId: job.plan.id,
    deliveryId: `${base}_progress`,
    state: "running",
    fields: { ...fields, state: "running", seq: job.plan.timeline.length + 1 },
    attempts: 0,
    dueAt: world.now(),
  });
}

/** Delivers one message to the process and acts on the answer the way its sender would. */
export async function deliverMessage(world: SimWorld, message: Message): Promise<void> {
  if (message.kind === "webhook") return deliverWebhook(world, message);
  return deliverCallback(world, message);
}

async function deliverWebhook(
  world: SimWorld,
  message: Extract<Message, { kind: "webhook" }>,
): Promise<void> {
  message.attempts++;
  const { fields } = message;
  const plan = world.truth.get(message.provider, message.jobId)?.plan;
  const head = JSON.stringify({
    jobId: message.jobId,
    state: fields.state,
    ...(fields.seq !== undefined ? { seq: fields.seq } : {}),
    updateTime:
      typeof fields.updateTime === "string"
        ? fields.updateTime
        : new Date(fields.updateTime as number).toISOString(),
  });
  if (plan && plan.payload.shape !== "small" && (message.state === "succeeded" || message.state === "failed"))
    world.count(plan.payload.shape === "large" ? "result-large" : "result-deep");
  const body = `${head.slice(0, -1)}${plan ? payloadMember(plan, message.state) : ""}}`;
  const headers = signStandardWebhook({
    id: message.deliveryId,
    // A bounds probe is signed on time: it tests the body's time, not the signature's.
    timestampSeconds: (world.now() + (message.probe ? 0 : world.skewMs)) / 1000,
    body,
    secret: SECRET,
  });
  let status: number | "no answer";
  try {
    const answer = await world.proc.intake.receive(
      message.provider,
      {
        id: headers["webhook-id"],
        timestamp: headers["webhook-timestamp"],
        signature: headers["webhook-signature"],
      },
      async () => new TextEncoder().encode(body),
      {},
    );
    status = world.power.dead ? "no answer" : 200;
    if (status === 200) {
      world.log(`  webhook ${message.deliveryId} ${message.state} → 200 ${answer.outcome}`);
      noteOutcome(world, message, answer.outcome);
    }
  } catch (error) {
    status =
      world.power.dead || error instanceof SimCrash
        ? "no answer"
        : isFinalityError(error)
          ? PROBLEM_STATUS[error.code]
          : 500;
  }
  if (message.probe === "at-bound" && typeof status === "number" && status !== 200)
    throw new InvariantViolation({
      invariant: "time-bounds-refused",
      detail: `webhook ${message.deliveryId} with updateTime ${String(message.fields.updateTime)}, at the bound, answered ${status}`,
    });
  if (message.probe === "out-of-bounds" && status !== "no answer" && status !== 400)
    throw new InvariantViolation({
      invariant: "time-bounds-refused",
      detail: `webhook ${message.deliveryId} with updateTime ${String(message.fields.updateTime)} answered ${status}, not 400`,
    });
  if (status === 200) {
    const key = `${message.provider}/${message.deliveryId}`;
    world.acked.set(key, {
      provider: message.provider,
      jobId: message.jobId,
      deliveryId: message.deliveryId,
      state: message.state,
    });
    world.ackedToVerify.push(key);
    return;
  }
  if (typeof status === "number" && status >= 500)
    throw new InvariantViolation({
      invariant: "no-5xx",
      detail: `webhook ${message.deliveryId} answered ${status}`,
    });
  world.log(`  webhook ${message.deliveryId} ${message.state} → ${status}`);
  if (message.probe === undefined) senderRetry(world, message);
}

/** Standard Webhooks senders retry with backoff, then give up: reconcile has to find those. */
export function senderRetry(world: SimWorld, message: Message): void {
  if (message.kind === "webhook" && message.attempts >= SIM.senderMaxAttempts && world.phase === "chaos") {
    world.count("sender-gave-up");
    world.log(`  sender gave up on ${message.deliveryId}`);
    return;
  }
  world.network.push({ ...message, dueAt: world.now() + 1_000 * 2 ** Math.min(message.attempts, 4) });
}

async function deliverCallback(
  world: SimWorld,
  message: Extract<Message, { kind: "callback" }>,
): Promise<void> {
  message.attempts++;
  const { attemptId, event } = message;
  const store = engineOf(world.proc.finality).store;
  const run = await store.getRun(message.runId);
  const attempt = (await store.runAttempts(message.runId)).find((a) => a.id === attemptId);
  const now = world.now();
  const fresh =
    attempt !== undefined &&
    run !== null &&
    attempt.generation === event.generation &&
    attempt.generation === run.generation &&
    !isRevokedAttempt(attempt.status) &&
    (attempt.leaseExpiresAt === null || attempt.leaseExpiresAt > now);
  const tried = `${attemptId}:${event.sequence}`;
  const triedBefore = world.callbacksTried.has(tried);
  world.callbacksTried.add(tried);
  try {
    const result = await world.proc.runs.recordEvent(attemptId, event);
    if (world.power.dead) return senderRetry(world, message);
    world.log(
      `  callback ${event.type} gen=${event.generation} seq=${event.sequence} (${message.workerId}) → ${result.outcome}`,
    );
    if (result.outcome === "duplicate" && !triedBefore)
      throw new InvariantViolation({
        invariant: "callback-heard",
        detail: `${event.type} ${event.sequence} of attempt ${attemptId}, sent for the first time, was answered duplicate`,
      });
    if (result.outcome === "applied" && !fresh) {
      throw new InvariantViolation({
        invariant: "no-stale-callback-applied",
        detail: `${event.type} of attempt ${attemptId} generation ${event.generation} applied, but the run is at generation ${run?.generation} and the attempt is ${attempt?.status}`,
      });
    }
  } catch (error) {
    if (error instanceof InvariantViolation) throw error;
    if (world.power.dead || error instanceof SimCrash) return senderRetry(world, message);
    if (isFinalityError(error, "stale-generation") || isFinalityError(error, "not-found")) {
      world.log(
        `  callback ${event.type} gen=${event.generation} (${message.workerId}) → 409 ${isFinalityError(error) ? error.details.reason : ""}`,
      );
      return;
    }
    throw error;
  }
}
