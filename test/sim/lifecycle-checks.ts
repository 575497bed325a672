import { isTruncated } from "../../src/core/bounded-value.js";
import type { Job } from "../../src/core/model.js";
import { engineOf } from "../helpers/engine.js";
import { sinkTarget } from "./effect-sink.js";
import { renderDoneMatches } from "./sim-config.js";
import { mustBeTruncated, payloadValue } from "./sim-payload.js";
import { key } from "./sim-provider.js";
import { InvariantViolation, type SimWorld } from "./sim-world.js";

/** The checks added for issue 15's defect classes: pruning, kind-filtered effects, bounded values. */

function fail(invariant: string, detail: string): never {
  throw new InvariantViolation({ invariant, detail });
}

/**
 * `no-effect-after-prune`: a job retention pruned never comes back into the ledger, and nothing
 * is delivered for it after it was pruned (a late webhook, a replay, a registration changes nothing).
 */
export async function noEffectAfterPrune(world: SimWorld): Promise<void> {
  if (world.pruned.size === 0) return;
  const store = engineOf(world.proc.finality).store;
  for (const [name, at] of world.pruned) {
    const slash = name.indexOf("/");
    const job = { provider: name.slice(0, slash), id: name.slice(slash + 1) };
    const back = await store.getJob(job);
    if (back !== null)
      fail("no-effect-after-prune", `${name} was pruned at ${at} and is back, ${back.state}`);
    const late = world.sink.deliveries.find(
      (d) => d.provider === job.provider && d.jobId === job.id && d.at > at,
    );
    if (late) fail("no-effect-after-prune", `${late.effect} was delivered for ${name} after it was pruned`);
  }
}

/** The kind-filtered effect's rule, as the schedule's configuration draws it (sim-config.ts). */
const matchesRenderDone = (world: SimWorld, provider: string, kind: string | null, state: string) =>
  renderDoneMatches(world.schedule.config.parsed, provider, kind, state);

/**
 * `effects-for-every-match` for a job in the ledger: the kind-filtered effect has one row exactly
 * when the job's final kind and state match it (whenever the kind became known: a late
 * registration too), delivered, applied once under that row's key; none otherwise.
 */
export async function kindEffectsOf(world: SimWorld, job: Job): Promise<void> {
  const rows = (
    await engineOf(world.proc.finality).store.listEffects({
      provider: job.provider,
      jobId: job.id,
      limit: 100,
    })
  ).items.filter((e) => e.jobId === job.id && e.name === "render-done");
  const applied =
    world.sink.appliedFor.get(sinkTarget(job.provider, job.id, "render-done", "job.settled")) ?? [];
  const name = key(job.provider, job.id);
  const expected = job.settledAt !== null && matchesRenderDone(world, job.provider, job.kind, job.state);
  if (!expected) {
    if (rows.length > 0 || applied.length > 0)
      fail(
        "effects-for-every-match",
        `${name} (${job.kind}, ${job.state}) has render-done: ${rows.length} rows, applied ${applied.length}`,
      );
    return;
  }
  const row = rows[0];
  if (rows.length !== 1 || row === undefined)
    fail(
      "effects-for-every-match",
      `${name} (${job.kind}, ${job.state}) has ${rows.length} render-done rows, not 1`,
    );
  if (row.status !== "delivered")
    fail("effects-for-every-match", `${name}'s render-done is ${row.status} after the heal`);
  if (applied.length !== 1 || applied[0] !== row.idempotencyKey)
    fail(
      "effects-for-every-match",
      `${name}'s render-done (key ${row.idempotencyKey}) was applied as [${applied.join(", ")}]`,
    );
}

/**
 * `effects-for-every-match` for a pruned job: what was applied for it is what its kind (known if it
 * was registered before the pass, or a run's) and its tombstone's state match, once each.
 */
export function prunedEffects(world: SimWorld, name: string, state: string, kind: string | null): void {
  const [provider, ...rest] = name.split("/");
  const id = rest.join("/");
  const count = (effect: string) =>
    (world.sink.appliedFor.get(sinkTarget(provider!, id, effect, "job.settled")) ?? []).length;
  if (count("notify") !== 1)
    fail("effects-for-every-match", `pruned ${name} (${state}) had notify applied ${count("notify")} times`);
  const expected = matchesRenderDone(world, provider!, kind, state) ? 1 : 0;
  if (count("render-done") !== expected)
    fail(
      "effects-for-every-match",
      `pruned ${name} (${kind}, ${state}) had render-done applied ${count("render-done")} times, not ${expected}`,
    );
}

/** `results-bounded`: a settled job keeps its state; its result or error is the value, or the marked stand-in if it was past the bounds. */
export function resultsBounded(world: SimWorld, job: Job): void {
  const known = world.truth.get(job.provider, job.id);
  if (!known || (job.state !== "succeeded" && job.state !== "failed")) return;
  // Settled from a list (discovery without polling): a list carries no result or error.
  if (job.settledBy === "discovery") return;
  const stored = job.state === "succeeded" ? job.result : job.error;
  const name = key(job.provider, job.id);
  if (mustBeTruncated(known.plan)) {
    if (!isTruncated(stored))
      fail(
        "results-bounded",
        `${name}'s ${known.plan.payload.shape} value was stored without the truncated marker`,
      );
  } else if (JSON.stringify(stored) !== JSON.stringify(payloadValue(known.plan)))
    fail("results-bounded", `${name} stored ${JSON.stringify(stored)?.slice(0, 80)} for its small value`);
}
