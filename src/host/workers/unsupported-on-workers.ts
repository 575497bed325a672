import type { FinalityConfig } from "../../config/config-schema.js";
import { FinalityError } from "../../core/errors.js";

/** One key a Worker cannot honour, and why. */
interface Unsupported {
  field: string;
  why: string;
}

/**
 * The keys of a configuration that ask for something a Worker cannot do. Each is refused at start
 * rather than ignored: a Worker that silently exported no traces, or wrote to its own SQLite while
 * the operator believed it shared a PostgreSQL ledger, would fail far from the cause.
 */
export function unsupportedOnWorkers(config: FinalityConfig): Unsupported[] {
  const found: Unsupported[] = [];
  // Workers open no TCP sockets to brokers (their clients need node:net).
  config.effects.forEach((effect, i) => {
    if (effect.nats || effect.amqp || effect.redis)
      found.push({
        field: `effects.${i}`,
        why: "broker destinations (nats, amqp, redis) need `finality serve` (Node); a Worker delivers url effects only",
      });
  });
  if ("postgres" in config.store)
    found.push({
      field: "store.postgres",
      why: "a Worker's ledger is its Durable Objects' own SQLite (docs/cloudflare-workers.md, D1 or PostgreSQL)",
    });
  if ("sqlite" in config.store && config.store.cacheMiB !== undefined)
    found.push({
      field: "store.cacheMiB",
      why: "a Durable Object's SQLite is sized by Cloudflare; the page cache is for `finality serve`'s SQLite file",
    });
  if (config.telemetry.otlpUrl !== undefined)
    found.push({
      field: "telemetry.otlpUrl",
      why: "OpenTelemetry export needs `finality serve` (Node); on Workers use wrangler tail and Workers Analytics",
    });
  return found;
}

/** Throws `invalid-config` naming every key a Worker cannot honour (the first in `field`). */
export function refuseUnsupportedOnWorkers(config: FinalityConfig): void {
  const found = unsupportedOnWorkers(config);
  const first = found[0];
  if (first === undefined) return;
  throw new FinalityError(
    "invalid-config",
    `config error: ${found.map((u) => `${u.field}: ${u.why}`).join("; ")}`,
    { details: { field: first.field } },
  );
}
