import { z } from "zod";
import { CANONICAL_STATES } from "../core/states.js";

/**
 * The `providers.<name>` part of the configuration: one schema per adapter type, chosen by
 * `type`. Key names are a contract with users (docs/providers/): add, never rename.
 * Unknown keys are refused at every level ("webhooks" for "webhook" would otherwise start a
 * provider that refuses every webhook); the error names the closest declared key.
 */
export const PROVIDER_TYPES = ["gemini", "openai", "anthropic", "replicate", "generic"] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** Where each provider's status API lives; the SDKs' own defaults, so the same URL works for both. */
export const DEFAULT_BASE_URLS = {
  gemini: "https://generativelanguage.googleapis.com",
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  replicate: "https://api.replicate.com/v1",
} as const;
export const GEMINI_JWKS_URL = "https://generativelanguage.googleapis.com/.well-known/jwks.json";

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
export const discoverSchema = z.strictObject({
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
      variant("openai", { ...apiFields(DEFAULT_BASE_URLS.openai), webhook: standardWebhook.optional() }),
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
      variant("generic", {
        webhook: genericWebhook.optional(),
        poll: genericPoll.optional(),
        discover: genericDiscover.optional(),
        /** The sender's state names → canonical ones, for webhooks and polls alike. */
        states: z.record(z.string().min(1), z.enum(CANONICAL_STATES)).optional(),
      }),
    ]),
  );
