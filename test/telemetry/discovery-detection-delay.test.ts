import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJson } from "../http/helpers/webhooks.js";
import { serveWithEffect, startReceiver } from "./helpers.js";

// A job a discovery sweep settles straight from the list (a generic instance with no poll URL,
// so no poll follows) is counted in finality_detection_delay_seconds{source="discovery"}: its
// listed updateTime is 100 s old, so the delay is ~100 s.

const AGO = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

function sample(body: string, name: string, labels: string): number | undefined {
  const line = body.split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

/** Until `check` holds, reading again after each answer (each read is an HTTP round trip, no timer). */
async function until<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (check(value)) return value;
  }
}

describe("detection delay of a job settled by a discovery sweep", () => {
  let listApi: Server;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let served: Awaited<ReturnType<typeof serveWithEffect>>;

  beforeAll(async () => {
    // The generic list contract: one page, the job listed settled.
    const page = {
      data: [{ jobId: "job-listed", state: "succeeded", updateTime: AGO(100), createdAt: AGO(200) }],
      nextCursor: null,
    };
    listApi = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(page));
    });
    listApi.listen(0, "127.0.0.1");
    await once(listApi, "listening");
    const { port } = listApi.address() as AddressInfo;
    receiver = await startReceiver();
    served = await serveWithEffect({
      receiverUrl: receiver.url,
      acme: {
        discover: {
          enabled: true,
          intervalSeconds: 0.05,
          url: `http://127.0.0.1:${port}/jobs?after={cursor}`,
        },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await served?.cleanup();
    await receiver?.close();
    await new Promise((resolve) => listApi?.close(resolve));
  });

  it("finality_detection_delay_seconds{source=discovery} counts it once, with the listed updateTime", async () => {
    const url = served.service.url;
    // The sweep reports its page's adoptions and settlements together, after its commit.
    const body = await until(
      async () => (await fetch(`${url}/metrics`)).text(),
      (text) => sample(text, "finality_jobs_discovered_total", 'provider="acme"') === 1,
    );
    const job = await getJson(`${url}/v1/jobs/acme/job-listed`);
    expect(job.body).toMatchObject({ state: "succeeded" });
    expect(sample(body, "finality_detection_delay_seconds_count", 'provider="acme",source="discovery"')).toBe(
      1,
    );
    const delay = sample(body, "finality_detection_delay_seconds_sum", 'provider="acme",source="discovery"');
    expect(delay).toBeGreaterThanOrEqual(99);
    expect(delay).toBeLessThan(130);
  }, 60_000);
});
