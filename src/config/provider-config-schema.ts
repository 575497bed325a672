import * as z from "zod";
import { CANONICAL_STATES } from "../core/states.js";

/**
 * The `providers.<name>` part of the configuration: one schema per adapter type, chosen by
 * `type`. Key names are a contract with users (docs/providers/): add, never rename.
 * Unknown keys are refused at every level ("webhooks" for "webhook" would otherwise start a
 * provider that refuses every webhook); the error names the closest declared key.
 */
export const PROVIDER_TYPES = [
  "gemini",
  "openai",
  "anthropic",
  "replicate",
  "generic",
  "bedrock",
  "vertex",
  "fal",
] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** Types whose provider sends no webhooks: their jobs are polled and listed only. */
export const POLL_ONLY_TYPES: ReadonlySet<ProviderType> = new Set(["bedrock", "vertex"]);

/** A provider instance's `webhook` block; undefined for the types that have none. */
export function webhookConfigOf(provider: { type: ProviderType }): unknown {
  return "webhook" in provider ? provider.webhook : undefined;
}

/** Where each provider's status API lives; the SDKs' own defaults, so the same URL works for both. */
const DEFAULT_BASE_URLS = {
  gemini: "https://generativelanguage.googleapis.com",
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  replicate: "https://api.replicate.com/v1",
  fal: "https://queue.fal.run",
} as const;
const GEMINI_JWKS_URL = "https://generativelanguage.googleapis.com/.well-known/jwks.json";
/** fal's webhook signing keys (https://docs.fal.ai/model-apis/model-endpoints/webhooks). */
const FAL_JWKS_URL = "https://rest.alpha.fal.ai/.well-known/jwks.json";
/** fal's Platform APIs, where its request list is (https://docs.fal.ai/platform-apis/v1/models/requests/by-endpoint). */
const FAL_PLATFORM_URL = "https://api.fal.ai/v1";

const positiveSeconds = z.number().finite().positive();
const BASE64 = "[A-Za-z0-9+/]+={0,2}";
const secret = z
  .string()
  .min(1, "must not be empty")
  .refine(
    (value) => !value.startsWith("whsec_") || new RegExp(`^whsec_${BASE64}$`).test(value),
    "a whsec_ secret must be followed by base64",
  )
  .refine(
    (value) =>
      !value.startsWith("whpk_") ||
      (new RegExp(`^whpk_${BASE64}$`).test(value) && atob(value.slice(5)).length === 32),
    "a whpk_ key must be followed by the base64 of a 32-byte ed25519 public key",
  );
export const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http or https URL" });
const baseUrl = (fallback: string) => httpUrl.default(fallback).transform((url) => url.replace(/\/+$/, ""));
const headerName = z
  .string()
  .regex(/^[A-Za-z0-9-]+$/, "must be an HTTP header name")
  .transform((name) => name.toLowerCase());

const standardWebhookFields = {
  /** Several during a rotation: `whsec_<base64>`, raw text, or `whpk_<base64>` (ed25519, v1a). */
  secrets: z.array(secret).min(1, "needs at least one secret"),
  toleranceSeconds: positiveSeconds.default(300),
};
const standardWebhook = z.strictObject(standardWebhookFields);

const genericWebhook = z
  .strictObject({
    ...standardWebhookFields,
    // Checked below: only Standard Webhooks secrets are base64; HMAC and Stripe take raw text.
    secrets: z.array(z.string().min(1, "must not be empty")).min(1, "needs at least one secret"),
    scheme: z.enum(["standard-webhooks", "hmac-sha256", "stripe"]).default("standard-webhooks"),
    /** hmac-sha256: the header with the signature (e.g. X-Hub-Signature-256); stripe: Stripe-Signature. */
    header: headerName.optional(),
    encoding: z.enum(["hex", "base64"]).default("hex"),
    /** Text before the digest, e.g. `sha256=` (GitHub). */
    prefix: z.string().default(""),
    /** The sender's delivery id header (e.g. X-GitHub-Delivery); default: the body's hash. */
    idHeader: headerName.optional(),
  })
  .superRefine((webhook, ctx) => {
    if (webhook.scheme === "hmac-sha256" && webhook.header === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["header"],
        message: "the hmac-sha256 scheme needs `header`, the header that carries the signature",
      });
    if (webhook.scheme !== "standard-webhooks") return;
    webhook.secrets.forEach((value, index) => {
      const checked = secret.safeParse(value);
      if (!checked.success)
        ctx.addIssue({
          code: "custom",
          path: ["secrets", index],
          message: checked.error.issues[0]?.message ?? "invalid",
        });
    });
  });

const jwksDocument = z.looseObject({ keys: z.array(z.looseObject({})).min(1) });
const geminiWebhook = z
  .strictObject({
    secrets: standardWebhookFields.secrets.optional(),
    toleranceSeconds: standardWebhookFields.toleranceSeconds,
    /** Per-request webhooks: an RS256 JWT in Webhook-Signature, checked against a JWKS. */
    jwt: z
      .strictObject({
        jwksUrl: httpUrl.default(GEMINI_JWKS_URL),
        /** The key set itself instead of a URL (tests, air-gapped set-ups). */
        jwks: jwksDocument.optional(),
        audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
        issuer: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
      })
      .optional(),
  })
  .refine((w) => w.secrets !== undefined || w.jwt !== undefined, {
    message: "needs `secrets` (project webhooks) or `jwt` (per-request webhooks), or both",
  });

/**
 * A Google service account key (the JSON file the console gives), as its text (`env:NAME` holding
 * the file's content) or as an object. Only the fields used are kept; a message about it never
 * repeats the value.
 */
const serviceAccountKey = z.union([z.string(), z.looseObject({})]).transform((value, ctx) => {
  let key: unknown = value;
  if (typeof value === "string") {
    try {
      key = JSON.parse(value);
    } catch {
      key = null;
    }
  }
  const fields = typeof key === "object" && key !== null ? (key as Record<string, unknown>) : {};
  const text = (name: string) =>
    typeof fields[name] === "string" && fields[name] !== "" ? (fields[name] as string) : undefined;
  const clientEmail = text("client_email");
  const privateKey = text("private_key");
  const tokenUri = text("token_uri");
  if (clientEmail === undefined || privateKey?.includes("-----BEGIN PRIVATE KEY-----") !== true) {
    ctx.addIssue({
      code: "custom",
      message:
        "must be a service account key: JSON with client_email and private_key (PKCS#8 PEM), e.g. env:NAME holding the key file's content",
    });
    return z.NEVER;
  }
  if (tokenUri !== undefined && !httpUrl.safeParse(tokenUri).success) {
    ctx.addIssue({ code: "custom", message: "token_uri must be an http or https URL" });
    return z.NEVER;
  }
  return {
    client_email: clientEmail,
    private_key: privateKey,
    private_key_id: text("private_key_id"),
    token_uri: tokenUri,
  };
});

/**
 * fal webhooks: Ed25519 signatures checked against fal's published key set. No secret to share,
 * so `webhook: {}` turns them on; `userIds` pins the fal account (fal signs every account's
 * webhooks with the same keys, so without it another account's request could be pointed here).
 */
const falWebhook = z.strictObject({
  jwksUrl: httpUrl.default(FAL_JWKS_URL),
  toleranceSeconds: positiveSeconds.default(300),
  /** How long a fetched key set is used before it is fetched again (fal's examples: 24 hours). */
  jwksCacheSeconds: positiveSeconds.default(86_400),
  userIds: z.array(z.string().min(1)).min(1).optional(),
});

/** Whose batch API an `openai` instance speaks: OpenAI's, or a copy of it (providers/openai/openai-compat.ts). */
const OPENAI_COMPAT = ["openai", "groq", "together", "mistral"] as const;
export type OpenAICompat = (typeof OPENAI_COMPAT)[number];

/** A fal endpoint id, `owner/alias` with an optional sub-path (`fal-ai/flux/dev`). */
const FAL_ENDPOINT_ID = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)+$/;

/** How to reach a provider's status API. The key goes to `baseUrl` and nowhere else. */
const apiFields = (fallback: string) => ({
  baseUrl: baseUrl(fallback),
  apiKey: z.string().min(1, "must not be empty"),
  /** Time allowed for one status poll. */
  timeoutSeconds: positiveSeconds.default(10),
  /** Time allowed for the fetch a thin webhook triggers (the sender is waiting for the answer). */
  fetchTimeoutSeconds: positiveSeconds.default(5),
});

const jsonPath = z.string().min(1).max(256);
const genericPoll = z.strictObject({
  /** The status URL, with `{id}` where the URL-encoded job id goes. */
  url: httpUrl,
  headers: z.record(z.string(), z.string()).optional(),
  timeoutSeconds: positiveSeconds.optional(),
  /** Where the answer keeps each field (`a.b.0.c`); absent: the generic webhook body's own shape. */
  paths: z
    .strictObject({
      id: jsonPath.optional(),
      state: jsonPath.default("state"),
      seq: jsonPath.optional(),
      updateTime: jsonPath.optional(),
      result: jsonPath.optional(),
      error: jsonPath.optional(),
    })
    .optional(),
});

/**
 * Discovery sweeps (opt-in): list the jobs created at the provider in the last `lookbackHours` and
 * adopt those Finality does not know. `pagesPerSweep` is the budget of list calls one sweep may make.
 */
const discoverSchema = z.strictObject({
  enabled: z.boolean().default(false),
  intervalSeconds: positiveSeconds.default(300),
  lookbackHours: positiveSeconds.default(48),
  pagesPerSweep: z.number().int().min(1).max(10_000).default(20),
});

/**
 * The generic provider's `discover`: where its list API is. Only that type reads these keys, so
 * only its schema has them, and another type given `discover.url` is refused rather than ignored.
 */
const genericDiscover = discoverSchema.extend({
  /** The list URL, `{cursor}` where the URL-encoded cursor goes (empty on the first page). */
  url: httpUrl.optional(),
  headers: z.record(z.string(), z.string()).optional(),
  timeoutSeconds: positiveSeconds.optional(),
});

/** The reconcile settings: the top level gives their defaults, a provider instance may override any. */
export const reconcileFields = {
  graceSeconds: z.number().finite().nonnegative(),
  minIntervalSeconds: positiveSeconds,
  maxIntervalSeconds: positiveSeconds,
  stuckAfterSeconds: positiveSeconds,
  /** Polls of one provider instance in flight at once. */
  concurrency: z.number().int().min(1).max(1000),
  /** Polls a second, sustained (a token bucket); none: as fast as `concurrency` allows. */
  ratePerSecond: z.number().finite().positive(),
  /** Polls allowed at once above the rate (the bucket's size); default: one second's worth. */
  burst: z.number().int().min(1),
};

/** What every type shares: the policy for unknown jobs and the reconcile overrides. */
const common = {
  unknownJobs: z.enum(["adopt", "registered-only"]).default("adopt"),
  /** Seconds an intent may stay without a remote id before it is flagged orphaned; default: the top-level one. */
  intentTimeoutSeconds: positiveSeconds.optional(),
  discover: discoverSchema.optional(),
  reconcile: z.strictObject(reconcileFields).partial().optional(),
};

const variant = <T extends ProviderType, Shape extends z.core.$ZodLooseShape>(type: T, shape: Shape) =>
  z.strictObject({ type: z.literal(type), ...common, ...shape });

/** One provider instance. */
export const providerSchema = z
  // The type is checked first, alone (the other keys pass this step), so that a wrong one gets a
  // plain message naming the choices; the variant then refuses unknown keys.
  .looseObject({ type: z.enum(PROVIDER_TYPES, { error: `must be one of: ${PROVIDER_TYPES.join(", ")}` }) })
  .pipe(
    z.discriminatedUnion("type", [
      variant("gemini", {
        ...apiFields(DEFAULT_BASE_URLS.gemini),
        apiVersion: z
          .string()
          .regex(/^v[0-9a-z]+$/)
          .default("v1beta"),
        webhook: geminiWebhook.optional(),
      }),
      variant("openai", {
        ...apiFields(DEFAULT_BASE_URLS.openai),
        webhook: standardWebhook.optional(),
        /** Whose copy of OpenAI's batch API `baseUrl` is (docs/providers/openai-compatible.md). */
        compat: z
          .string()
          .default("openai")
          .superRefine((value, ctx) => {
            if (value === "fireworks")
              ctx.addIssue({
                code: "custom",
                message:
                  "Fireworks batch inference is not OpenAI's batch API (accounts/{account}/batchInferenceJobs, JOB_STATE_* states): use a generic provider with poll.url and states (docs/providers/openai-compatible.md)",
              });
            else if (!(OPENAI_COMPAT as readonly string[]).includes(value))
              ctx.addIssue({ code: "custom", message: `must be one of: ${OPENAI_COMPAT.join(", ")}` });
          })
          .transform((value) => value as OpenAICompat),
      }).refine((openai) => openai.compat === "openai" || openai.webhook === undefined, {
        path: ["webhook"],
        message: "only OpenAI sends batch webhooks: Groq, Together and Mistral batches settle by polling",
      }),
      variant("anthropic", {
        ...apiFields(DEFAULT_BASE_URLS.anthropic),
        anthropicVersion: z.string().min(1).default("2023-06-01"),
        /** Beta header the Managed Agents session endpoints require. */
        sessionsBeta: z.string().min(1).default("managed-agents-2026-04-01"),
        webhook: standardWebhook.optional(),
        // Which lists a sweep reads: a key without Managed Agents access lists batches only (a
        // list that fails every time would stop every sweep there).
        discover: discoverSchema
          .extend({
            kinds: z
              .array(z.enum(["message_batch", "session"]))
              .min(1)
              .optional(),
          })
          .optional(),
      }),
      variant("replicate", {
        // Replicate's webhooks carry the whole prediction: without a key, webhooks alone still work.
        ...apiFields(DEFAULT_BASE_URLS.replicate),
        apiKey: z.string().min(1, "must not be empty").optional(),
        webhook: standardWebhook.optional(),
      }),
      variant("bedrock", {
        /** The AWS region of the batch inference jobs, e.g. us-east-1. */
        region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-[0-9]+$/, "must be an AWS region, e.g. us-east-1"),
        /** Default: https://bedrock.{region}.amazonaws.com. */
        baseUrl: httpUrl.transform((url) => url.replace(/\/+$/, "")).optional(),
        accessKeyId: z.string().min(1, "must not be empty"),
        secretAccessKey: z.string().min(1, "must not be empty"),
        /** With temporary credentials (STS). */
        sessionToken: z.string().min(1, "must not be empty").optional(),
        timeoutSeconds: positiveSeconds.default(10),
      }),
      variant("vertex", {
        /** The project the list reads (its id or number). */
        project: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "must be a project id or number"),
        /** The region, e.g. us-central1: jobs live in one location, and so does the endpoint. */
        location: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, "must be a location, e.g. us-central1"),
        /** Default: https://{location}-aiplatform.googleapis.com. */
        baseUrl: httpUrl.transform((url) => url.replace(/\/+$/, "")).optional(),
        apiVersion: z
          .string()
          .regex(/^v[0-9a-z]+$/)
          .default("v1"),
        serviceAccountKey,
        /** Where the signed assertion is exchanged for a token; default: the key's token_uri. */
        tokenUri: httpUrl.optional(),
        /** A token this close to its expiry is renewed before use. */
        tokenRefreshBeforeSeconds: positiveSeconds.default(300),
        timeoutSeconds: positiveSeconds.default(10),
      }),
      variant("fal", {
        // fal's webhooks carry the result: without a key, webhooks alone still work.
        // No fetchTimeoutSeconds: a fal webhook carries the result, nothing is fetched on one.
        baseUrl: baseUrl(DEFAULT_BASE_URLS.fal),
        apiKey: z.string().min(1, "must not be empty").optional(),
        timeoutSeconds: positiveSeconds.default(10),
        /** The endpoint id polled for a job whose kind does not name one (`fal-ai/flux/dev`). */
        app: z
          .string()
          .regex(FAL_ENDPOINT_ID, "must be a fal endpoint id such as fal-ai/flux/dev")
          .optional(),
        /** Where the request list (discovery) is; the API key goes there too. */
        platformBaseUrl: baseUrl(FAL_PLATFORM_URL),
        webhook: falWebhook.optional(),
      }),
      variant("generic", {
        webhook: genericWebhook.optional(),
        poll: genericPoll.optional(),
        discover: genericDiscover.optional(),
        /** The sender's state names → canonical ones, for webhooks and polls alike. */
        states: z.record(z.string().min(1), z.enum(CANONICAL_STATES)).optional(),
      }),
    ]),
  );
