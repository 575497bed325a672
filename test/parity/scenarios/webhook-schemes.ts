import { createHmac } from "node:crypto";
import { expect } from "vitest";
import { seededRandom } from "../../../src/core/clock.js";
import { OTHER_SECRET, SECRET, signWith } from "../../http/helpers/webhooks.js";
import { ED25519_PAIRS, ed25519Signature, standardContent } from "../../webhooks-web/helpers/keys.js";
import {
  counterSum,
  deliveriesFor,
  expectOncePerKey,
  inLanes,
  json,
  SCALE,
  type Scenario,
} from "../scenario.js";

const PAIR = ED25519_PAIRS[0] as (typeof ED25519_PAIRS)[0];
const HMAC_SECRET = "parity-hmac-secret-0123";
const STRIPE_SECRET = "whsec_parity_stripe_secret";

/** One provider instance per signature scheme, and how to sign a body for it (a redelivery signs alike). */
const SCHEMES: Record<
  string,
  { webhook: Record<string, unknown>; sign(id: string, body: string): Record<string, string> }
> = {
  "wh-standard": {
    // Rotated secrets: the old one first, so the match is not always the first candidate.
    webhook: { secrets: [OTHER_SECRET, SECRET] },
    sign: (id, body) => signWith(SECRET, body, { id }),
  },
  "wh-ed25519": {
    webhook: { secrets: [PAIR.secret] },
    sign(id, body) {
      const timestamp = String(Math.floor(Date.now() / 1000));
      return {
        "webhook-id": id,
        "webhook-timestamp": timestamp,
        "webhook-signature": ed25519Signature(
          PAIR.privateKey,
          standardContent(id, timestamp, Buffer.from(body)),
        ),
      };
    },
  },
  "wh-hmac": {
    webhook: {
      secrets: [HMAC_SECRET],
      scheme: "hmac-sha256",
      header: "x-hub-signature-256",
      prefix: "sha256=",
    },
    sign: (_id, body) => ({
      "x-hub-signature-256": `sha256=${createHmac("sha256", HMAC_SECRET).update(body).digest("hex")}`,
    }),
  },
  "wh-stripe": {
    webhook: { secrets: [STRIPE_SECRET], scheme: "stripe" },
    sign(_id, body) {
      const t = Math.floor(Date.now() / 1000);
      return {
        "stripe-signature": `t=${t},v1=${createHmac("sha256", STRIPE_SECRET).update(`${t}.${body}`).digest("hex")}`,
      };
    },
  },
};
const PROVIDERS = Object.keys(SCHEMES);
const terminalOf = (i: number) => (i % 3 === 0 ? "failed" : "succeeded");

/**
 * Webhooks under every signature scheme, each job's three notifications duplicated and shuffled
 * over every URL: each job ends in its terminal state, each effect is delivered once, a forged
 * signature is refused (problem+json, nothing stored), and /metrics counts what was received.
 */
export const webhookSchemes: Scenario = {
  name: "webhook-schemes",
  config: ({ receiver }) => ({
    providers: Object.fromEntries(
      PROVIDERS.map((p) => [p, { type: "generic", webhook: SCHEMES[p]?.webhook }]),
    ),
    effects: [{ name: "scheme-settled", url: receiver.url, secret: SECRET, providers: PROVIDERS }],
  }),
  async run(running, { receiver }) {
    const jobs = 4 * SCALE;
    const sends: { provider: string; id: string; body: string }[] = [];
    for (const provider of PROVIDERS)
      for (let i = 0; i < jobs; i++)
        for (const [seq, state] of ["running", "running", terminalOf(i)].entries())
          sends.push({
            provider,
            id: `${provider}-${i}-${seq}`,
            body: JSON.stringify({ jobId: `job-${i}`, state, seq: seq + 1 }),
          });
    const random = seededRandom(32);
    const plan = [...sends, ...sends.filter(() => random() < 0.5)];
    for (let i = plan.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [plan[i], plan[j]] = [plan[j] as (typeof plan)[0], plan[i] as (typeof plan)[0]];
    }
    const statuses = await inLanes(plan, 16, async ({ provider, id, body }) => {
      const headers = { "content-type": "application/json", ...SCHEMES[provider]?.sign(id, body) };
      const response = await running.fetch(`/webhooks/${provider}`, { method: "POST", headers, body });
      await response.arrayBuffer();
      return response.status;
    });
    expect(statuses.filter((s) => s !== 200)).toEqual([]);

    for (const provider of PROVIDERS)
      for (let i = 0; i < jobs; i++) {
        const { status, body } = await json(running, `/v1/jobs/${provider}/job-${i}`);
        expect(status).toBe(200);
        expect(body.state, `${provider}/job-${i}`).toBe(terminalOf(i));
      }

    const forged = JSON.stringify({ jobId: "forged-1", state: "succeeded" });
    const refused = await running.fetch("/webhooks/wh-hmac", {
      method: "POST",
      headers: { "content-type": "application/json", "x-hub-signature-256": `sha256=${"0".repeat(64)}` },
      body: forged,
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect((await running.fetch("/v1/jobs/wh-hmac/forged-1")).status).toBe(404);

    // Every POST counted once, over every replica (Workers: summed over shards).
    for (const provider of PROVIDERS) {
      const posted = plan.filter((p) => p.provider === provider).length + (provider === "wh-hmac" ? 1 : 0);
      expect(await counterSum(running, "finality_webhooks_received_total", { provider }), provider).toBe(
        posted,
      );
    }

    await receiver.until(() => deliveriesFor(receiver, PROVIDERS).length >= PROVIDERS.length * jobs);
    expectOncePerKey(deliveriesFor(receiver, PROVIDERS), PROVIDERS.length * jobs);
  },
};
