import type { Scenario } from "./scenario.js";
import { dashboard } from "./scenarios/dashboard.js";
import { discoveredIntentSettles, discovery } from "./scenarios/discovery.js";
import { intents } from "./scenarios/intents.js";
import { registration } from "./scenarios/registration.js";
import { runs } from "./scenarios/runs.js";
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
  dashboard,
];

/** The fault scenarios of faults.test.ts (one deployment each), by the names the docs cite. */
export const FAULT_SCENARIOS = { postgres: "postgres-faults", workers: "workerd-restart" } as const;
