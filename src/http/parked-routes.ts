import type { Hono } from "hono";
import * as z from "zod";
import { LIMITS, queryInteger } from "../core/validation.js";
import type { Finality } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import type { ParkedObservation, Tombstone } from "../store/lifecycle-store.js";
import type { AppEnv } from "./app-env.js";
import { addListRoute } from "./list-route.js";

export const listQuerySchema = z.strictObject({
  provider: z.string().min(1).max(LIMITS.providerNameLength).optional(),
  id: z.string().min(1).max(LIMITS.jobIdLength).optional(),
  limit: queryInteger(1, 500).optional(),
  cursor: z.string().min(1).max(200).optional(),
});

/** The public JSON shape of a parked observation: what arrived, and when it was parked. */
export function parkedToJson(parked: ParkedObservation) {
  const { observation } = parked;
  return {
    parkedNo: parked.parkedNo,
    provider: parked.provider,
    id: parked.id,
    parkedAt: new Date(parked.parkedAt).toISOString(),
    observation: {
      state: observation.state,
      source: observation.source,
      rawState: observation.rawState ?? null,
      seq: observation.seq ?? null,
      updateTime: observation.updateTime ?? null,
      deliveryId: observation.deliveryId ?? null,
      kind: observation.kind ?? null,
      result: observation.result ?? null,
      error: observation.error ?? null,
    },
  };
}

export function tombstoneToJson(tombstone: Tombstone) {
  return {
    state: tombstone.state,
    settledAt: new Date(tombstone.settledAt).toISOString(),
    effectsHash: tombstone.effectsHash,
  };
}

/**
 * The early-completion inbox over HTTP: observations for jobs not registered yet (providers with
 * `unknownJobs: registered-only`), newest first. They are applied when their job is registered.
 */
export function addParkedRoutes(app: Hono<AppEnv>, finality: Finality): void {
  const { store } = engineOf(finality);
  addListRoute(app, "/v1/parked", listQuerySchema, (query) => store.listParked(query), parkedToJson);
}
