import { FinalityError } from "../core/errors.js";
import type { JobKey, Observation } from "../core/model.js";
import { sha256Hex } from "../core/sha256-hex.js";
import type { TerminalState } from "../core/states.js";
import type { Page } from "./page.js";

/**
 * The lifecycle part of the store port: what outlives a job (its tombstone, after retention
 * deleted it) and what comes before it (observations parked until it is registered). `Store`
 * and `StoreTx` extend these; every adapter implements them with the same semantics.
 */

/**
 * What retention keeps of a settled job it deleted, for its own, longer window: enough to answer
 * a late webhook or a replay `already-settled-pruned` instead of creating the job again.
 */
export interface Tombstone extends JobKey {
  state: TerminalState;
  settledAt: number;
  /** `effectsFiredHash` of the job's outbox rows when it was pruned. */
  effectsHash: string;
}

/** A verified observation for a job not registered yet, under `registered-only`. */
export interface ParkedObservation extends JobKey {
  /** Arrival order; parked observations are applied in it. */
  parkedNo: number;
  /** The sender's delivery id (`observation.deliveryId`), kept in its own column: unique per provider. */
  deliveryId: string | null;
  parkedAt: number;
  observation: Observation;
}

export interface ParkedQuery {
  provider?: string | undefined;
  id?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface LifecycleReads {
  getTombstone(key: JobKey): Promise<Tombstone | null>;
  /** Newest first, keyset-paged like the other listings. */
  listParked(query: ParkedQuery): Promise<Page<ParkedObservation>>;
}

export interface LifecycleStoreTx {
  getTombstone(key: JobKey): Promise<Tombstone | null>;
  /**
   * Parks `observation` for its job; false when an observation with the same delivery id is
   * parked already. Throws `version-conflict` (so the work is run again) when the job was
   * registered by a transaction that committed meanwhile: a parked row must never miss its
   * registration.
   */
  parkObservation(observation: Observation, now: number): Promise<boolean>;
  /** Removes and returns the job's parked observations, oldest first. */
  takeParked(key: JobKey): Promise<ParkedObservation[]>;
}

/** One outbox row as the tombstone's hash sees it. */
export interface FiredEffect {
  name: string;
  trigger: string;
  idempotencyKey: string;
}

/**
 * 128 bits of SHA-256 over a job's outbox rows (name, trigger, idempotency key), in a fixed
 * order, so the same effects give the same hash on every store. Transactional effects leave no
 * outbox row and are not in it.
 */
export function effectsFiredHash(effects: readonly FiredEffect[]): string {
  // Most pruned jobs fired one effect or none: spare them the sort (and the empty set its digest).
  if (effects.length === 0) return EMPTY_HASH;
  const lines = effects
    .map((e) => `${e.name}\u0000${e.trigger}\u0000${e.idempotencyKey}`)
    .sort()
    .join("\n");
  return digest(lines);
}

const digest = (text: string) => sha256Hex(text).slice(0, 32);
const EMPTY_HASH = digest("");

/** What `parkObservation` throws when the job exists after all: the work is run again. */
export function jobRegisteredMeanwhile(provider: string, id: string): FinalityError {
  return new FinalityError("version-conflict", `job ${provider}/${id} was registered meanwhile`, {
    details: { provider, id },
  });
}
