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
  // Its own id for each aborted claim: a claim whose withdrawal a crash cut off is left to its
  // lease, and must not be taken for the next aborted claim's.
  const workerId = `${worker.id}-gone-${world.abortedClaims}`;
  // Every other one claims with `start`: a claim that started the run is withdrawn the same way.
  // Schedules hold one or two aborted claims: the seed spreads the ways over them.
  const nth = world.abortedClaims++ + world.processSeed;
  const start = nth % 2 === 1;
  const controller = new AbortController();
  // A run ready to claim is claimed before the client could leave a wait: it leaves mid-commit.
  const ready = (await world.proc.runs.listRuns({ status: "queued", limit: 500 })).items.some(
    (r) => r.availableAt <= world.now(),
  );
  const during = step.during || ready;
  // Mid-commit, the client leaves as the transaction starts (the claim sees it and claims
  // nothing) or, every other time, once the claim is under way (it commits, then is withdrawn).
  const afterLook = during && Math.floor(nth / 2) % 2 === 1;
  // Every other such withdrawal meets a cancel of its run, committed between the claim and the
  // withdrawal: the run must end cancelled (`runs-settle`), not sit queued for ever.
  const cancelMidWithdrawal = Math.floor(nth / 4) % 2 === 1;
  const cancelClaimed = async () => {
    const store = engineOf(world.proc.finality).store;
    for (const runId of world.runIds)
      for (const attempt of await store.runAttempts(runId))
        if (attempt.workerId === workerId && isLiveAttempt(attempt.status)) {
          world.count("cancel-before-withdrawal");
          world.log(`  ${runId} cancelled between the claim of ${workerId} and its withdrawal`);
          await world.proc.runs.cancel(runId);
        }
  };
  // Whether the claim found a run before its client left: the claim commits, then is withdrawn.
  let found = false;
  const leaveMidCommit = (picked = false) => {
    found = picked;
    controller.abort();
    if (picked && cancelMidWithdrawal) world.power.beforeTx = cancelClaimed;
  };
  // Not mid-commit: the client leaves once its claim has found nothing and waits (a run found
  // after all is left mid-commit). On SQLite, the group commit runs the transaction on a later
  // turn of the event loop than the call: a leave on the next turn came before it.
  let leave: NodeJS.Immediate | undefined;
  if (afterLook) world.power.onPick = leaveMidCommit;
  else if (during) world.power.beforeTx = leaveMidCommit;
  else
    world.power.onPick = (picked) => {
      if (picked) leaveMidCommit(true);
      else leave = setImmediate(() => controller.abort());
    };
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
    if (leave !== undefined) clearImmediate(leave);
    world.power.beforeTx = null;
    world.power.onPick = null;
  }
  world.count(found ? "claim-withdrawn" : during ? "claim-aborted-mid-commit" : "claim-aborted");
  world.log(
    `  ${workerId} went away during its claim${start ? " (with start)" : ""}${found ? ", once its claim had a run (withdrawn)" : during ? ", as its claim began" : ", as its claim waited"} → ${claimed === null ? "nothing claimed" : "claimed!"}`,
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
