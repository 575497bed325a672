import type { ProviderConfig } from "../config/config-schema.js";
import { POLL_ONLY_TYPES } from "../config/provider-config-schema.js";
import { FinalityError } from "../core/errors.js";
import { CANONICAL_STATES, type CanonicalState } from "../core/states.js";
import { encodeBase64, encodeHex } from "../webhooks/byte-encoding.js";
import { isPublicKeySecret } from "../webhooks/schemes/standard-webhooks/header.js";
import { signStandardWebhookWeb } from "../webhooks/schemes/standard-webhooks/web.js";
import { signedContent, signHmac, utf8HmacKey } from "../webhooks/web-crypto-keys.js";
import { REPLICATE_PREDICTION_STATES } from "./replicate/replicate-states.js";

/**
 * A webhook signed the way a provider instance's configuration says its sender signs, so that a
 * person can try a provider without five lines of openssl: `finality send` posts it, and the
 * dashboard's "send test webhook" form may too (WebCrypto only: it runs on Node and Workers).
 *
 * Bodies are built for the providers whose webhooks carry the state: `generic` (its own shape,
 * with each of its signature schemes) and `replicate` (the prediction). OpenAI, Anthropic and
 * Gemini webhooks only name the job and the service then fetches it from the provider's API,
 * which a test cannot stand in for, so they are refused with that reason.
 */
interface TestWebhookInput {
  jobId: string;
  /** A canonical state; mapped to the provider's own name where it has one. */
  state: CanonicalState;
  result?: unknown;
  /** The delivery id; a fresh one by default (a repeated id is recorded as a duplicate). */
  id?: string;
  /** Epoch milliseconds: signed as whole seconds, as every scheme expects. */
  now: number;
}

interface SignedTestWebhook {
  /** Relative to the service: `/webhooks/<provider>`. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Why no test webhook can be signed for this provider instance (its type's webhooks carry no
 * state, it has no secret, or only public keys), or null when one can.
 */
export function testWebhookUnavailable(provider: string, config: ProviderConfig): string | null {
  if (POLL_ONLY_TYPES.has(config.type))
    return `provider "${provider}" is of type ${config.type}, which sends no webhooks: its jobs are polled and listed (use \`finality jobs observe\` to record a state by hand)`;
  if (config.type === "fal")
    return `provider "${provider}" is of type fal, whose webhooks are signed with fal's own private keys: no test webhook can be signed for it (use \`finality jobs observe\`)`;
  if (config.type !== "generic" && config.type !== "replicate")
    return `provider "${provider}" is of type ${config.type}, whose webhooks only name the job: the service then fetches it from ${config.type}'s API, which a test webhook cannot stand in for (use a generic or replicate provider, or \`finality jobs observe\`)`;
  if (config.webhook === undefined)
    return `provider "${provider}" has no webhook secret: the service refuses its webhooks (add providers.${provider}.webhook.secrets)`;
  const standard = config.type === "replicate" || config.webhook.scheme === "standard-webhooks";
  if (signingSecretOf(config.webhook.secrets, standard) === undefined)
    return `provider "${provider}" has only whpk_ public keys: they check v1a signatures but cannot make one`;
  return null;
}

/** The states a test webhook of this provider instance can report (replicate has no "lost"). */
export function testWebhookStates(config: ProviderConfig): readonly CanonicalState[] {
  if (config.type !== "replicate") return CANONICAL_STATES;
  const reported = new Set(Object.values(REPLICATE_PREDICTION_STATES));
  return CANONICAL_STATES.filter((state) => reported.has(state));
}

export async function signTestWebhook(
  provider: string,
  config: ProviderConfig,
  input: TestWebhookInput,
): Promise<SignedTestWebhook> {
  if (!CANONICAL_STATES.includes(input.state))
    throw refused(`unknown state "${input.state}": expected one of ${CANONICAL_STATES.join(", ")}`);
  const unavailable = testWebhookUnavailable(provider, config);
  if (unavailable !== null) throw refused(unavailable);
  const id = input.id ?? `msg_test_${input.now.toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
  const timestampSeconds = Math.floor(input.now / 1000);
  const path = `/webhooks/${encodeURIComponent(provider)}`;
  const json = { "content-type": "application/json" };

  if (config.type === "generic") {
    // Checked by testWebhookUnavailable above.
    const webhook = config.webhook as NonNullable<typeof config.webhook>;
    const body = JSON.stringify({
      jobId: input.jobId,
      state: input.state,
      ...(input.result === undefined ? {} : { result: input.result }),
    });
    const secret = signingSecret(webhook.secrets, webhook.scheme === "standard-webhooks");
    if (webhook.scheme === "standard-webhooks") {
      const headers = await signStandardWebhookWeb({ id, timestampSeconds, body, secret });
      return { path, headers: { ...json, ...headers }, body };
    }
    const idHeaders: Record<string, string> = webhook.idHeader ? { [webhook.idHeader]: id } : {};
    if (webhook.scheme === "hmac-sha256") {
      const digest = await signHmac(utf8HmacKey(secret), new TextEncoder().encode(body));
      const text = webhook.encoding === "hex" ? encodeHex(digest) : encodeBase64(digest);
      // `header` is required for this scheme (config-schema checks it).
      const header = webhook.header ?? "x-signature";
      return { path, headers: { ...json, ...idHeaders, [header]: `${webhook.prefix}${text}` }, body };
    }
    const digest = await signHmac(utf8HmacKey(secret), signedContent(`${timestampSeconds}.`, body));
    const header = webhook.header ?? "stripe-signature";
    return {
      path,
      headers: { ...json, ...idHeaders, [header]: `t=${timestampSeconds},v1=${encodeHex(digest)}` },
      body,
    };
  }

  if (config.type === "replicate") {
    const webhook = config.webhook as NonNullable<typeof config.webhook>;
    const status = Object.entries(REPLICATE_PREDICTION_STATES).find(
      ([, state]) => state === input.state,
    )?.[0];
    if (status === undefined) throw refused(`replicate has no prediction status for "${input.state}"`);
    const body = JSON.stringify({
      id: input.jobId,
      status,
      ...(input.result === undefined ? {} : { output: input.result }),
    });
    const secret = signingSecret(webhook.secrets, true);
    const headers = await signStandardWebhookWeb({ id, timestampSeconds, body, secret });
    return { path, headers: { ...json, ...headers }, body };
  }

  throw new Error(`unreachable: provider type ${config.type} passed testWebhookUnavailable`);
}

/** The first secret that can sign: a `whpk_` public key only checks (v1a), it cannot sign. */
function signingSecretOf(secrets: readonly string[], standard: boolean): string | undefined {
  return standard ? secrets.find((s) => !isPublicKeySecret(s)) : secrets[0];
}

function signingSecret(secrets: readonly string[], standard: boolean): string {
  const secret = signingSecretOf(secrets, standard);
  if (secret === undefined) throw new Error("unreachable: checked by testWebhookUnavailable");
  return secret;
}

function refused(message: string): FinalityError {
  return new FinalityError("invalid-request", message, { details: {} });
}
