import { expect } from "vitest";
import { SECRET } from "../../http/helpers/webhooks.js";
import type { Deployment } from "../deployments.js";
import { refusal, type StartScenario } from "../scenario.js";

const provider = {
  "refusal-acme": { type: "generic", webhook: { secrets: [SECRET], toleranceSeconds: 300 } },
};

/** A configuration, and the keys each deployment's refusal must name (none: it is not refused there). */
interface Case {
  what: string;
  config: Record<string, unknown>;
  refusedBy: Partial<Record<Deployment["name"], RegExp[]>>;
}

const CASES: Case[] = [
  {
    // What every deployment refuses alike: the same parse, the same message.
    what: "delivery ids kept shorter than a provider's webhook tolerance (86 s < 300 s)",
    config: { providers: provider, retention: { deliveriesDays: 0.001 } },
    refusedBy: {
      sqlite: [/retention\.deliveriesDays/, /refusal-acme/],
      "postgres×3": [/retention\.deliveriesDays/, /refusal-acme/],
      "workers×4": [/retention\.deliveriesDays/, /refusal-acme/],
    },
  },
  {
    // What only a Worker cannot do: a broker, OpenTelemetry export, a PostgreSQL ledger. Each key
    // is named in one message, so an operator fixes them all at once.
    what: "a broker effect, OTLP export and a PostgreSQL store",
    config: {
      providers: provider,
      effects: [
        {
          name: "refused-bus",
          nats: {
            servers: ["nats://127.0.0.1:4222"],
            subject: "finality.refused",
            stream: "FINALITY_REFUSED",
          },
        },
      ],
      telemetry: { otlpUrl: "http://127.0.0.1:4318" },
      store: { postgres: "postgres://127.0.0.1:5432/test" },
    },
    refusedBy: {
      "workers×4": [/effects\.0: broker destinations/, /telemetry\.otlpUrl/, /store\.postgres/],
    },
  },
  {
    // PostgreSQL only: a client deadline that would give up before the server's own cancel.
    what: "store.queryTimeoutSeconds not above store.statementTimeoutSeconds",
    config: { providers: provider, store: { statementTimeoutSeconds: 10, queryTimeoutSeconds: 5 } },
    refusedBy: { "postgres×3": [/store\.queryTimeoutSeconds/, /statementTimeoutSeconds/] },
  },
];

/**
 * Config refusals: a feature a deployment cannot offer, or a configuration no deployment accepts,
 * ends its start with an error naming the keys, never a deployment that runs and differs. The
 * configurations a deployment accepts are run by the other scenarios (a broker: `broker-effects`).
 */
export const configRefusals: StartScenario = {
  name: "config-refusals",
  async run(deployment) {
    for (const c of CASES) {
      const expected = c.refusedBy[deployment.name];
      if (expected === undefined) continue;
      const message = await refusal(deployment, c.config);
      expect(message, c.what).not.toBeNull();
      for (const key of expected) expect(message, c.what).toMatch(key);
    }
  },
};
