import { afterAll, beforeAll, describe, it } from "vitest";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { type Deployment, parityDeployments, type Running } from "./deployments.js";
import { combinedConfig, type Fakes } from "./scenario.js";
import { SCENARIOS } from "./scenario-list.js";
import { VendorFakes } from "./vendor-fakes.js";

/**
 * The deployment parity suite (issue 32): the same black-box scenarios, unchanged, against
 * `finality serve` on SQLite, three `serve` replicas on one PostgreSQL schema (requests
 * round-robin) and the Worker with four ledger shards in workerd. Each deployment is started
 * once with every scenario's providers and effects; scenarios use their own provider instances.
 */

describe.each(parityDeployments())("parity on $name", { timeout: 120_000 }, (deployment: Deployment) => {
  const fakes: Fakes = {
    receiver: new EffectReceiver(SECRET),
    provider: new FakeProvider(),
    vendors: new VendorFakes(),
  };
  let running: Running;
  beforeAll(async () => {
    await fakes.receiver.listen();
    await fakes.provider.listen();
    await fakes.vendors.listen();
    running = await deployment.start(combinedConfig(SCENARIOS, fakes));
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
    await deployment.cleanup();
    await fakes.receiver.close();
    await fakes.provider.close();
    await fakes.vendors.close();
  });

  for (const scenario of SCENARIOS) {
    const gap = scenario.knownGaps?.[deployment.name];
    if (gap === undefined) it(scenario.name, () => scenario.run(running, fakes, deployment.name));
    else
      it.fails(`${scenario.name} (known gap: ${gap})`, () => scenario.run(running, fakes, deployment.name));
  }
});
