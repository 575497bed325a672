import { afterAll, beforeAll, describe, it } from "vitest";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { type Deployment, parityDeployments } from "./deployments.js";
import type { Fakes } from "./scenario.js";
import { START_SCENARIOS } from "./scenario-list.js";
import { VendorFakes } from "./vendor-fakes.js";

/**
 * The parity scenarios that start each deployment themselves (config refusals, a broker): the
 * same `run` against every deployment, each start with its own configuration.
 */

describe.each(parityDeployments())(
  "parity (own starts) on $name",
  { timeout: 120_000 },
  (deployment: Deployment) => {
    const fakes: Fakes = {
      receiver: new EffectReceiver(SECRET),
      provider: new FakeProvider(),
      vendors: new VendorFakes(),
    };
    beforeAll(async () => {
      await fakes.receiver.listen();
      await fakes.provider.listen();
      await fakes.vendors.listen();
    });
    afterAll(async () => {
      await deployment.cleanup();
      await fakes.receiver.close();
      await fakes.provider.close();
      await fakes.vendors.close();
    });

    for (const scenario of START_SCENARIOS) {
      const gap = scenario.knownGaps?.[deployment.name];
      if (gap === undefined) it(scenario.name, () => scenario.run(deployment, fakes));
      else it.fails(`${scenario.name} (known gap: ${gap})`, () => scenario.run(deployment, fakes));
    }
  },
);
