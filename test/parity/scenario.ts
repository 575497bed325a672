import { expect } from "vitest";
import type { FakeProvider } from "../../src/testing/fake-provider.js";
import type { EffectReceiver, ReceivedDelivery } from "../helpers/receiver.js";
import { API_TOKEN, type Deployment, type Running } from "./deployments.js";
import type { VendorFakes } from "./vendor-fakes.js";

/**
 * A scenario that starts each deployment itself, with a configuration the shared start cannot
 * hold (one some deployment refuses, a broker only some can reach). The same `run` everywhere;
 * what a deployment cannot offer is asserted as its refusal, never skipped.
 */
export interface StartScenario {
  name: string;
  run(deployment: Deployment, fakes: Fakes): Promise<void>;
  knownGaps?: Partial<Record<Deployment["name"], string>>;
}

/** What starting `config` on `deployment` is refused with (the error's message), or null if it started. */
export async function refusal(
  deployment: Deployment,
  config: Record<string, unknown>,
): Promise<string | null> {
  let running: Running;
  try {
    running = await deployment.start(config);
  } catch (error) {
    return (error as Error).message;
  }
  await running.stop();
  return null;
}

/** How many jobs a scenario uses per case: 1 in CI, more with FINALITY_PARITY_SCALE=10. */
export const SCALE = Math.max(1, Number(process.env.FINALITY_PARITY_SCALE ?? "1") || 1);

/**
 * The fakes every scenario shares: the effect receiver, a generic provider (polls, lists) and the
 * vendor APIs (fal, Bedrock, Vertex AI, Mistral).
 */
export interface Fakes {
  receiver: EffectReceiver;
  provider: FakeProvider;
  vendors: VendorFakes;
}

/**
 * A black-box scenario: what it adds to the one configuration every deployment is started with
 * (its own provider instances and effects, so that scenarios never see each other's jobs), and
 * the checks it runs against the started deployment. The same `run` on every deployment.
 */
export interface Scenario {
  /** The name docs/cloudflare-workers.md and docs/postgresql.md cite. */
  name: string;
  config(fakes: Fakes): { providers?: Record<string, unknown>; effects?: unknown[]; workers?: unknown };
  run(running: Running, fakes: Fakes, deployment: Deployment["name"]): Promise<void>;
  /**
   * Deployments known to fail this scenario, with why: there the test is `it.fails`, so it goes
   * red the day the gap is closed (and the entry must go). Never a skip.
   */
  knownGaps?: Partial<Record<Deployment["name"], string>>;
}

/** Merges every scenario's part into one configuration. */
export function combinedConfig(scenarios: Scenario[], fakes: Fakes): Record<string, unknown> {
  const providers: Record<string, unknown> = {};
  const effects: unknown[] = [];
  let workers: unknown;
  for (const scenario of scenarios) {
    const part = scenario.config(fakes);
    Object.assign(providers, part.providers ?? {});
    effects.push(...(part.effects ?? []));
    workers ??= part.workers;
  }
  return {
    providers,
    effects,
    ...(workers === undefined ? {} : { workers }),
    reconcile: { graceSeconds: 0.5, minIntervalSeconds: 0.5, maxIntervalSeconds: 1 },
    log: { level: (process.env.PARITY_LOG_LEVEL ?? "error") as string },
  };
}

export async function json<T = Record<string, unknown>>(
  running: Running,
  path: string,
  init?: RequestInit,
): Promise<{ status: number; body: T; type: string }> {
  const response = await running.fetch(path, init);
  const text = await response.text();
  return {
    status: response.status,
    body: (text ? JSON.parse(text) : null) as T,
    type: response.headers.get("content-type") ?? "",
  };
}

export function post(running: Running, path: string, body: unknown, headers: Record<string, string> = {}) {
  return json(running, path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/**
 * Waits until `check` passes, running the deployment's periodic work between tries (the cron on
 * Workers): the condition is the test; the deadline only ends a run that would never pass.
 */
export async function eventually(running: Running, check: () => Promise<void>, timeoutMs = 20_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (performance.now() > deadline) throw error;
    }
    await running.tick();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Deliveries the receiver got for jobs of these provider instances. */
export function deliveriesFor(receiver: EffectReceiver, providers: string[]): ReceivedDelivery[] {
  return receiver.deliveries.filter((d) => providers.includes(d.body.job.provider));
}

/** Each key once: every delivery of `deliveries` has a key of its own. */
export function expectOncePerKey(deliveries: ReceivedDelivery[], keys: number) {
  expect(new Set(deliveries.map((d) => d.key)).size).toBe(keys);
  expect(deliveries).toHaveLength(keys);
}

/** The sum of a Prometheus counter's samples over every URL whose labels include `labels`. */
export async function counterSum(running: Running, name: string, labels: Record<string, string>) {
  let sum = 0;
  for (const url of running.urls) {
    const response = await fetch(`${url}/metrics`, {
      headers: { authorization: `Bearer ${API_TOKEN}` },
    });
    const text = await response.text();
    for (const line of text.split("\n")) {
      if (!line.startsWith(`${name}{`)) continue;
      const wanted = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
      if (wanted) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return sum;
}

/** `work` over every item, `lanes` at once, results in the items' order. */
export async function inLanes<T, R>(items: T[], lanes: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i] as T);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return results;
}
