import type { ProviderConfigOf } from "../../config/config-schema.js";
import type { AdapterDeps, ProviderAdapter } from "../adapter-types.js";
import { pollOnlyReceiver } from "../poll-only-receiver.js";
import { createStatusClient } from "../status-client.js";
import { createServiceAccountTokenSource } from "./service-account-token.js";
import { createVertexLister } from "./vertex-list.js";
import { createVertexPoller } from "./vertex-status.js";

/** The scope the Vertex AI API takes (https://cloud.google.com/vertex-ai/docs/reference/rest). */
const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
/** Google's token endpoint, for a key file that names none. */
const DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token";

/**
 * Vertex AI batch prediction jobs. No webhooks: jobs are polled and listed, with an OAuth access
 * token obtained for the configured service account (service-account-token.ts), cached and
 * renewed before it expires.
 */
export function createVertexAdapter(
  provider: string,
  config: ProviderConfigOf<"vertex">,
  deps: AdapterDeps,
): ProviderAdapter {
  const token = createServiceAccountTokenSource({
    key: config.serviceAccountKey,
    tokenUri: config.tokenUri ?? config.serviceAccountKey.token_uri ?? DEFAULT_TOKEN_URI,
    scope: CLOUD_PLATFORM_SCOPE,
    now: deps.now,
    refreshBeforeMs: config.tokenRefreshBeforeSeconds * 1000,
    timeoutMs: config.timeoutSeconds * 1000,
  });
  const client = createStatusClient({
    provider,
    baseUrl: config.baseUrl ?? `https://${config.location}-aiplatform.googleapis.com`,
    headers: {},
    health: deps.health,
    credential: "service account's token",
    authorize: (_request, signal) => token(signal),
  });
  return {
    poller: createVertexPoller(provider, client, config.apiVersion, config.location),
    pollTimeoutMs: config.timeoutSeconds * 1000,
    lister: createVertexLister(client, config.apiVersion, config.project, config.location),
    receiver: pollOnlyReceiver(provider, "Vertex AI batch prediction"),
  };
}
