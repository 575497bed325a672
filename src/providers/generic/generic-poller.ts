import { isFinalityError } from "../../core/errors.js";
import type { Poller } from "../../engine/poller.js";
import { pollFailure } from "../../engine/poller.js";
import { parseGenericWebhook } from "../../webhooks/generic-webhook.js";

export interface GenericPollOptions {
  /** Status URL with `{id}` where the job id goes (URL-encoded). */
  url: string;
  headers?: Record<string, string>;
}

/**
 * Polls a generic job API: `GET url` answers the same JSON as the generic webhook,
 * `{jobId, state, seq?, updateTime?, result?, error?}`. The URL comes from configuration only,
 * never from a webhook body, so a sender cannot point polls elsewhere.
 */
export function createGenericPoller(provider: string, options: GenericPollOptions): Poller {
  return async (job, signal) => {
    const url = options.url.replaceAll("{id}", encodeURIComponent(job.id));
    const response = await fetch(url, {
      headers: { accept: "application/json", ...options.headers },
      signal,
    });
    const body = new Uint8Array(await response.arrayBuffer());
    if (!response.ok) return pollFailure(response.status, response.headers.get("retry-after"));
    try {
      const { deliveryId: _ignored, ...observation } = parseGenericWebhook(body, provider, "poll");
      if (observation.id !== job.id) {
        return { kind: "failed", error: `status API answered for job "${observation.id}", not "${job.id}"` };
      }
      return { kind: "observed", observation: { ...observation, source: "reconcile" } };
    } catch (error) {
      if (isFinalityError(error)) return { kind: "failed", error: `status API answer: ${error.message}` };
      throw error;
    }
  };
}
