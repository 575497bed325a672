import type { Scenario, StartScenario } from "./scenario.js";
import { brokerEffects } from "./scenarios/broker-effects.js";
import { configRefusals } from "./scenarios/config-refusals.js";
import { dashboard } from "./scenarios/dashboard.js";
import { discoveredIntentSettles, discovery } from "./scenarios/discovery.js";
import { intents } from "./scenarios/intents.js";
import { newProviders } from "./scenarios/new-providers.js";
import { probesAndWaits } from "./scenarios/probes-and-waits.js";
import { registration } from "./scenarios/registration.js";
import { retentionTombstones } from "./scenarios/retention-tombstones.js";
import { runs, runsEndClaimsNext } from "./scenarios/runs.js";
import { settlementFeed } from "./scenarios/settlement-feed.js";
import { webhookSchemes } from "./scenarios/webhook-schemes.js";

/**
 * The scenarios every deployment runs, in order. The dashboard comes last: it reads pages the
 * others filled. docs/cloudflare-workers.md and docs/postgresql.md cite these names.
 */
export const SCENARIOS: Scenario[] = [
  webhookSchemes,
  settlementFeed,
  registration,
  intents,
  discovery,
  discoveredIntentSettles,
  runs,
  runsEndClaimsNext,
  probesAndWaits,
  newProviders,
  dashboard,
];

/** The scenarios that start each deployment with a configuration of their own (parity-start.test.ts). */
export const START_SCENARIOS: StartScenario[] = [configRefusals, brokerEffects, retentionTombstones];

/** The fault scenarios of faults.test.ts (one deployment each), by the names the docs cite. */
export const FAULT_SCENARIOS = { postgres: "postgres-faults", workers: "workerd-restart" } as const;
