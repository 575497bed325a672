import type { ProviderConfigOf } from "../../config/config-schema.js";
import type { AdapterDeps, ProviderAdapter } from "../adapter-types.js";
import { pollOnlyReceiver } from "../poll-only-receiver.js";
import { createStatusClient } from "../status-client.js";
import { signSigV4 } from "./aws-sigv4.js";
import { createBedrockLister } from "./bedrock-list.js";
import { createBedrockPoller } from "./bedrock-status.js";

/**
 * Amazon Bedrock batch inference (model invocation jobs). No webhooks: jobs are polled and
 * listed, each request signed with Signature Version 4 (service `bedrock`) from the configured
 * credentials at the time it is sent.
 */
export function createBedrockAdapter(
  provider: string,
  config: ProviderConfigOf<"bedrock">,
  deps: AdapterDeps,
): ProviderAdapter {
  const credentials = {
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    sessionToken: config.sessionToken,
  };
  const client = createStatusClient({
    provider,
    baseUrl: config.baseUrl ?? `https://bedrock.${config.region}.amazonaws.com`,
    headers: {},
    health: deps.health,
    credential: "AWS credentials",
    authorize: async ({ url }) => ({
      kind: "headers",
      headers: await signSigV4({
        method: "GET",
        url,
        headers: {},
        credentials,
        region: config.region,
        service: "bedrock",
        now: deps.now(),
      }),
    }),
  });
  return {
    poller: createBedrockPoller(provider, client, config.region),
    pollTimeoutMs: config.timeoutSeconds * 1000,
    lister: createBedrockLister(client),
    receiver: pollOnlyReceiver(provider, "Amazon Bedrock batch inference"),
  };
}
