import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { signStandardWebhook } from "../../dist/webhooks/schemes/standard-webhooks/node.js";

export const BENCH_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/**
 * Writes `count` pre-signed generic webhooks, each a fresh delivery (own webhook-id, timestamp
 * and signature). Each job gets three: running (seq 1), running (seq 2), succeeded (seq 3),
 * spread over blocks of 1,000 jobs so that a job's deliveries are not back to back.
 */
export async function writePresigned(file, { count, prefix, secret = BENCH_SECRET }) {
  const out = createWriteStream(file);
  const timestampSeconds = Math.floor(Date.now() / 1000);
  const steps = [
    ["running", 1],
    ["running", 2],
    ["succeeded", 3],
  ];
  const block = 1000;
  let written = 0;
  for (let base = 0; written < count; base += block) {
    for (const [state, seq] of steps) {
      for (let j = 0; j < block && written < count; j++) {
        const jobId = `${prefix}-job-${base + j}`;
        const body = JSON.stringify(
          state === "succeeded"
            ? { jobId, state, seq, result: { url: `https://example.com/out/${jobId}.json` } }
            : { jobId, state, seq },
        );
        const id = `${prefix}-msg-${written}`;
        const headers = signStandardWebhook({ id, timestampSeconds, body, secret });
        const line = `${id}\t${headers["webhook-timestamp"]}\t${headers["webhook-signature"]}\t${body}\n`;
        if (!out.write(line)) await once(out, "drain");
        written++;
      }
    }
  }
  out.end();
  await once(out, "finish");
  return written;
}
