import { isFinalityError } from "../../src/core/errors.js";
import { isTerminal, rankOf } from "../../src/core/states.js";
import { engineOf } from "../helpers/engine.js";
import { key } from "./sim-provider.js";
import { SimCrash } from "./sim-types.js";
import { InvariantViolation, type SimWorld } from "./sim-world.js";

/** A registration the application will make (or retry) once `at` has come. */
export interface DueRegistration {
  provider: string;
  id: string;
  kind: string;
  at: number;
}

/** The registrations whose time has come, in order; the rest wait. */
export async function registerDue(world: SimWorld): Promise<void> {
  const now = world.now();
  const due = world.pendingRegistrations.filter((r) => r.at <= now);
  if (due.length === 0) return;
  world.pendingRegistrations.splice(
    0,
    world.pendingRegistrations.length,
    ...world.pendingRegistrations.filter((r) => r.at > now),
  );
  for (const registration of due) await register(world, registration);
}

/**
 * The application registers a job it submitted, and tries again until it hears back. A job that
 * settled and was pruned before its registration is refused 409 (`already-settled-pruned`): the
 * application has its answer, and nothing may fire again.
 */
async function register(world: SimWorld, job: DueRegistration): Promise<void> {
  const name = key(job.provider, job.id);
  try {
    const outcome = await world.proc.finality.register({
      provider: job.provider,
      id: job.id,
      kind: job.kind,
    });
    if (world.power.dead) throw new SimCrash("no answer");
    world.registeredAt.set(name, world.now());
    const known = world.truth.get(job.provider, job.id);
    const endsAt = known ? world.truth.endsAt(known) : null;
    world.count(
      endsAt !== null && endsAt <= world.now() ? "registered-after-settled" : "registered-before-settled",
    );
    if (outcome.effects.includes("render-done")) world.count("late-kind-effect");
    world.log(`  registered ${name} (${job.kind}): ${outcome.job.state}, parked applied ${outcome.parked}`);
    await parkedApplied(world, job);
  } catch (error) {
    if (isFinalityError(error, "conflict") && world.pruned.has(name)) {
      world.count("register-after-prune");
      world.registeredAt.set(name, world.now());
      world.log(`  register ${name} → 409 already-settled-pruned`);
      return;
    }
    if (!(world.power.dead || error instanceof SimCrash)) throw error;
    world.pendingRegistrations.push(job);
  }
}

/**
 * `parked-applied-on-register`: once a job is registered, nothing parked for it is left, and every
 * observation it had parked is applied: the job is at least as far along as each of them.
 */
async function parkedApplied(world: SimWorld, job: DueRegistration): Promise<void> {
  const store = engineOf(world.proc.finality).store;
  const parked = world.parkedStates.get(key(job.provider, job.id)) ?? [];
  const left = await store.listParked({ provider: job.provider, id: job.id, limit: 10 });
  const fail = (detail: string): never => {
    throw new InvariantViolation({ invariant: "parked-applied-on-register", detail });
  };
  if (left.items.length > 0)
    fail(`${job.provider}/${job.id} is registered but ${left.items.length} observation(s) are still parked`);
  if (parked.length === 0) return;
  const record = await store.getJob(job);
  if (record === null) return fail(`${job.provider}/${job.id} is registered but not in the ledger`);
  for (const state of parked) {
    const behind = isTerminal(state) ? !isTerminal(record.state) : rankOf(record.state) < rankOf(state);
    if (behind)
      fail(`${job.provider}/${job.id} parked ${state} but is ${record.state} after its registration`);
  }
}
