import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { type RunningService, serve } from "../../src/host/node/serve.js";
import { tempDir } from "../helpers/temp-dir.js";
import { SECRET } from "../http/helpers/webhooks.js";

/** An in-memory exporter that can be awaited: resolves once the spans it holds satisfy `until`. */
export class AwaitedSpanExporter extends InMemorySpanExporter {
  private waiters: { until: (spans: ReadableSpan[]) => boolean; resolve: () => void }[] = [];
  override export(spans: ReadableSpan[], done: Parameters<InMemorySpanExporter["export"]>[1]): void {
    super.export(spans, done);
    const all = this.getFinishedSpans();
    const ready = this.waiters.filter((w) => w.until(all));
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }
  spansUntil(until: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
    if (until(this.getFinishedSpans())) return Promise.resolve(this.getFinishedSpans());
    return new Promise((resolve) =>
      this.waiters.push({ until, resolve: () => resolve(this.getFinishedSpans()) }),
    );
  }
}

/**
 * An exporter whose spans outlive the service's stop: InMemorySpanExporter empties itself on
 * shutdown, so a test that stops the service (flushing every span) and then reads the exporter
 * would find nothing whatever had been exported, and a "no span" check could not fail.
 */
export class KeptSpanExporter extends AwaitedSpanExporter {
  override shutdown(): Promise<void> {
    this._stopped = true;
    return this.forceFlush();
  }
}

/** A loopback effect receiver: answers each request with the next status of `statuses` (then 200). */
export async function startReceiver(statuses: number[] = []): Promise<{
  url: string;
  requests: IncomingHttpHeaders[];
  received(count: number): Promise<IncomingHttpHeaders[]>;
  close(): Promise<void>;
}> {
  const requests: IncomingHttpHeaders[] = [];
  let waiters: { count: number; resolve: () => void }[] = [];
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      requests.push(request.headers);
      response.writeHead(statuses.shift() ?? 200).end();
      const ready = waiters.filter((w) => requests.length >= w.count);
      waiters = waiters.filter((w) => !ready.includes(w));
      for (const w of ready) w.resolve();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/effects`,
    requests,
    received: (count) =>
      requests.length >= count
        ? Promise.resolve(requests)
        : new Promise((resolve) => waiters.push({ count, resolve: () => resolve(requests) })),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** `finality serve` in this process, one generic provider `acme` and one URL effect `notify`. */
export async function serveWithEffect(options: {
  receiverUrl: string;
  telemetry?: Record<string, unknown>;
  spanExporter?: InMemorySpanExporter;
  env?: Record<string, string>;
  /** More of the `acme` provider's configuration (a status API to poll, its reconcile timing). */
  acme?: Record<string, unknown>;
  /** In place of the one URL effect `notify` (a broker effect, say). */
  effects?: Record<string, unknown>[];
  /** In place of a SQLite file in a temporary directory (a PostgreSQL schema, say). */
  store?: Record<string, unknown>;
}): Promise<{ service: RunningService; cleanup(): Promise<void> }> {
  const dir = tempDir("finality-telemetry-");
  const file = dir.file("finality.json");
  writeFileSync(
    file,
    JSON.stringify({
      server: { host: "127.0.0.1", port: 0 },
      store: options.store ?? { sqlite: dir.file("ledger.db"), synchronous: "NORMAL" },
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] }, ...options.acme } },
      effects: options.effects ?? [{ name: "notify", url: options.receiverUrl, secret: SECRET }],
      effectDelivery: { retrySeconds: [0.05], pollIntervalSeconds: 0.05 },
      log: { level: "error" },
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    }),
  );
  const service = await serve({
    configFile: file,
    flags: {},
    env: options.env ?? {},
    ...(options.spanExporter ? { spanExporter: options.spanExporter } : {}),
  });
  return {
    service,
    async cleanup() {
      await service.stop();
      dir.cleanup();
    },
  };
}

export const byName = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
export const only = (spans: ReadableSpan[], name: string): ReadableSpan => {
  const found = byName(spans, name);
  if (found.length !== 1)
    throw new Error(`expected one span "${name}", got ${found.length}: ${spans.map((s) => s.name)}`);
  return found[0] as ReadableSpan;
};
