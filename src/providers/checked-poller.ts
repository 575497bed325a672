import { checkObservationTimes } from "../core/bounds.js";
import { toError } from "../core/errors.js";
import type { Poller } from "../engine/poller.js";

/**
 * A poller whose answers are held to the ledger's timestamp bounds (core/bounds.ts). A poll
 * answer cannot be refused with a 400 the way a webhook is, so an answer whose `updateTime` is out
 * of range is an invalid answer from the provider: a poll failure (logged and counted by the
 * reconciler, the job's backoff grows, nothing about the job changes), and the next sane answer
 * is applied as usual. Applying it instead would make that time the job's ordering key for good.
 */
export function withCheckedAnswers(poller: Poller): Poller {
  return async (job, signal) => {
    const result = await poller(job, signal);
    if (result.kind !== "observed") return result;
    try {
      checkObservationTimes(result.observation);
      return result;
    } catch (error) {
      return { kind: "failed", error: `status API answer: ${toError(error).message}` };
    }
  };
}
