import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../host/node/serve.js";
import { FakeProvider } from "../testing/fake-provider.js";
import { createTraffic, type Traffic, webhookTally } from "./demo-traffic.js";
import { startDemoWorkers } from "./demo-workers.js";
import { cliPrettyLog } from "./pretty-log.js";

export interface DemoOptions {
  port: number;
  /** New jobs per second, per provider. */
  rate: number;
  /** Stop creating jobs after this many seconds (0: never). */
  forSeconds: number;
  /** When the flaky provider goes down, and for how long. */
  downAfterSeconds: number;
  downForSeconds: number;
  /** Keep the temporary database after stopping. */
  keep: boolean;
}

interface Demo {
  readonly url: string;
  readonly dbPath: string;
  /** One line: what the demo did so far. */
  status(): string;
  stop(): Promise<void>;
}

/**
 * `finality demo`: the real service (same `serve` as production) on a temporary SQLite file,
 * fed by two fake providers. `acme` loses, duplicates and reorders webhooks; `flaky` does too,
 * and goes down for a while (its status API answers 503 and it sends nothing), so the
 * reconciler has to catch what webhooks missed once it is back. Short reconcile intervals make
 * it visible within minutes. Effects go to a local receiver that rejects some at first, so the
 * dashboard shows dead effects to retry; and two workers take runs, one of them crashing now and
 * then (see demo-workers.ts).
 */
export async function startDemo(options: DemoOptions): Promise<Demo> {
  const dir = mkdtempSync(join(tmpdir(), "finality-demo-"));
  const dbPath = join(dir, "demo.db");
  const acme = new FakeProvider();
  const flaky = new FakeProvider();
  const started = Date.now();
  const receiver = await startReceiver(started);
  const secrets = { acme: newSecret(), flaky: newSecret(), notify: newSecret() };
  const configFile = join(dir, "finality.config.json");
  writeFileSync(
    configFile,
    JSON.stringify(
      demoConfig(
        options,
        dbPath,
        { acme: await acme.listen(), flaky: await flaky.listen() },
        receiver.url,
        secrets,
      ),
      null,
      2,
    ),
  );
  const service = await serve({ configFile, flags: {}, env: {}, prettyLog: cliPrettyLog() });

  const downFrom = started + options.downAfterSeconds * 1000;
  const downUntil = downFrom + options.downForSeconds * 1000;
  const isDown = () => Date.now() >= downFrom && Date.now() < downUntil;
  const outage = setInterval(() => {
    flaky.failWith = isDown() ? { status: 503 } : null;
  }, 200);
  const traffic: Traffic[] = [
    createTraffic({
      name: "acme",
      provider: acme,
      secret: secrets.acme,
      serviceUrl: service.url,
      rate: options.rate,
      pathIds: true,
      plan: { loss: 0.25, duplicate: 0.2, lateShare: 0.25 },
    }),
    createTraffic({
      name: "flaky",
      provider: flaky,
      secret: secrets.flaky,
      serviceUrl: service.url,
      rate: options.rate,
      down: isDown,
      plan: { loss: 0.35, duplicate: 0.1, lateShare: 0.3 },
    }),
  ];
  for (const t of traffic) t.start();
  const workers = startDemoWorkers(service.url);
  const pause =
    options.forSeconds > 0
      ? setTimeout(() => {
          for (const t of traffic) t.pause();
        }, options.forSeconds * 1000)
      : null;

  let stopping: Promise<void> | null = null;
  return {
    url: service.url,
    dbPath,
    status() {
      const [a, f] = traffic.map((t) => t.counts);
      const sum = (key: keyof Traffic["counts"]) => (a?.[key] ?? 0) + (f?.[key] ?? 0);
      const now = Date.now();
      const flakyState =
        now < downFrom
          ? `goes down in ${Math.ceil((downFrom - now) / 1000)} s`
          : now < downUntil
            ? `DOWN, back in ${Math.ceil((downUntil - now) / 1000)} s`
            : "back up";
      const elapsed = Math.round((now - started) / 1000);
      return `[${Math.floor(elapsed / 60)}:${String(elapsed % 60).padStart(2, "0")}] ${sum("jobs")} jobs created · ${webhookTally({ webhooksSent: sum("webhooksSent"), webhooksLost: sum("webhooksLost"), webhooksDuplicated: sum("webhooksDuplicated") })} · ${workers.enqueued} runs · flaky: ${flakyState}`;
    },
    stop() {
      stopping ??= (async () => {
        clearInterval(outage);
        if (pause) clearTimeout(pause);
        await Promise.all([...traffic.map((t) => t.stop()), workers.stop()]);
        await service.stop();
        await Promise.all([acme.close(), flaky.close(), closeServer(receiver.server)]);
        if (!options.keep) rmSync(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

function newSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

function demoConfig(
  options: DemoOptions,
  dbPath: string,
  providers: { acme: string; flaky: string },
  receiverUrl: string,
  secrets: { acme: string; flaky: string; notify: string },
) {
  const provider = (url: string, secret: string) => ({
    type: "generic",
    webhook: { secrets: [secret] },
    poll: { url: `${url}/jobs/{id}`, timeoutSeconds: 2 },
  });
  return {
    server: { host: "127.0.0.1", port: options.port },
    store: { sqlite: dbPath },
    providers: {
      acme: provider(providers.acme, secrets.acme),
      flaky: provider(providers.flaky, secrets.flaky),
    },
    // Seconds instead of minutes, so that convergence is visible while you watch.
    reconcile: { graceSeconds: 8, minIntervalSeconds: 3, maxIntervalSeconds: 15, stuckAfterSeconds: 120 },
    effects: [
      {
        name: "notify",
        url: receiverUrl,
        secret: secrets.notify,
        on: ["succeeded", "failed", "cancelled", "expired", "lost", "stuck"],
      },
    ],
    effectDelivery: { retrySeconds: [1, 3], maxAttempts: 3, pollIntervalSeconds: 0.5 },
    log: { level: "error" },
  };
}

/**
 * Where the demo's effects are delivered: for its first 90 s it rejects one delivery in six
 * (by idempotency key, so every retry of that effect fails too, and it ends up dead); after that
 * it takes everything, so retrying a dead effect from the dashboard delivers it.
 */
async function startReceiver(started: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const key = String(req.headers["webhook-id"] ?? "");
    req.resume();
    req.on("end", () => {
      const unlucky = [...key].reduce((sum, ch) => sum + ch.charCodeAt(0), 0) % 6 === 0;
      res.writeHead(unlucky && Date.now() - started < 90_000 ? 500 : 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/effects` };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
