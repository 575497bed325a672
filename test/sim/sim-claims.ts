import { isLiveAttempt } from "../../src/core/run-model.js";
import { engineOf } from "../helpers/engine.js";
import { SIM, SimCrash, type Step } from "./sim-types.js";
import { InvariantViolation, type SimWorld } from "./sim-world.js";

/**
 * A worker's long-poll claim whose client goes away: while it waits for a run (nothing queued),
 * or while its claim commits (the transaction runs with the signal already aborted). Either way
 * `aborted-claim-claims-nothing`: the answer is null and no attempt is left live for that client.
 * The client has its own worker id, so that what it holds cannot be mistaken for a real worker's.
 */
export async function abortedClaim(
  world: SimWorld,
  step: Extract<Step, { kind: "aborted-claim" }>,
): Promise<void> {
  const worker = world.workers[step.worker];
  if (worker === undefined || worker.dead || worker.holding !== null) return;
  const workerId = `${worker.id}-gone-${world.claims}`;
  // Every other one claims with `start`: a claim that started the run is withdrawn the same way.
  const start = world.abortedClaims++ % 2 === 1;
  const controller = new AbortController();
  // A run ready to claim is claimed before the client could leave a wait: it leaves mid-commit.
  const ready = (await world.proc.runs.listRuns({ status: "queued", limit: 500 })).items.some(
    (r) => r.availableAt <= world.now(),
  );
  const during = step.during || ready;
  if (during) world.power.beforeTx = () => controller.abort();
  // Once the claim waits (or if no transaction ran), the client leaves.
  const leave = setImmediate(() => controller.abort());
  let claimed: unknown = null;
  try {
    claimed = await world.proc.runs.claim({
      workerId,
      leaseSeconds: SIM.leaseSeconds,
      waitSeconds: 30,
      start,
      signal: controller.signal,
    });
  } catch (error) {
    if (!(error instanceof SimCrash || world.power.dead)) throw error;
  } finally {
    clearImmediate(leave);
    world.power.beforeTx = null;
  }
  world.count(during ? "claim-aborted-mid-commit" : "claim-aborted");
  world.log(
    `  ${workerId} went away during its claim${start ? " (with start)" : ""} → ${claimed === null ? "nothing claimed" : "claimed!"}`,
  );
  if (world.power.dead) return;
  const fail = (detail: string): never => {
    throw new InvariantViolation({ invariant: "aborted-claim-claims-nothing", detail });
  };
  if (claimed !== null) fail(`the aborted claim of ${workerId} answered a claim`);
  for (const runId of world.runIds)
    for (const attempt of await engineOf(world.proc.finality).store.runAttempts(runId))
      if (attempt.workerId === workerId && isLiveAttempt(attempt.status))
        fail(`attempt ${attempt.id} of run ${runId} is ${attempt.status} for the client that went away`);
}
