import { getEventListeners } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryError } from "../../src/engine/delivery-error.js";
import type { DeliveryStop } from "../../src/engine/effect-target.js";
import {
  createHttpEffectDeliverer,
  fetchTransport,
  httpEffectTarget,
} from "../../src/engine/http-effect-target.js";
import { createNodeHttpTransport } from "../../src/engine/node-http-transport.js";
import { makeJob } from "../helpers/records.js";

/** One delivery, as the dispatcher hands it to a url target. */
const delivery = {
  type: "job.settled" as const,
  effect: "notify",
  idempotencyKey: "fin_key",
  attempt: 2,
  job: makeJob({ id: "j1", state: "succeeded" }),
};

describe.each([
  ["fetch", fetchTransport],
  ["node:http", createNodeHttpTransport()],
])("effect deliveries over %s", (_name, transport) => {
  let server: Server;
  let base = "";
  const seen: { path: string; headers: Record<string, unknown>; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        seen.push({ path: req.url ?? "", headers: req.headers, body });
        if (req.url === "/ok") res.writeHead(204).end();
        else if (req.url === "/moved") res.writeHead(302, { location: "/ok" }).end();
        else if (req.url === "/busy") res.writeHead(429, { "retry-after": "120" }).end();
        // /slow never answers: the delivery must time out.
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const deliver = createHttpEffectDeliverer({ transport, now: () => Date.UTC(2026, 0, 1) });
  const definition = (path: string) => ({
    name: "notify",
    url: `${base}${path}`,
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  });

  it("POSTs the signed delivery and accepts a 2xx", async () => {
    await deliver(definition("/ok"), delivery, AbortSignal.timeout(5000));
    const last = seen.at(-1);
    expect(last?.headers["webhook-id"]).toBe("fin_key");
    expect(last?.headers["finality-attempt"]).toBe("2");
    expect(String(last?.headers["webhook-signature"])).toMatch(/^v1,/);
    expect(JSON.parse(last?.body ?? "{}")).toMatchObject({
      idempotencyKey: "fin_key",
      attempt: 2,
      job: { id: "j1" },
    });
  });

  it("treats a redirect as a failure and does not follow it", async () => {
    const before = seen.length;
    await expect(deliver(definition("/moved"), delivery, AbortSignal.timeout(5000))).rejects.toThrow(
      "answered 302",
    );
    expect(seen.length).toBe(before + 1);
  });

  it("carries the receiver's Retry-After", async () => {
    const error = await deliver(definition("/busy"), delivery, AbortSignal.timeout(5000)).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).retryAfterMs).toBe(120_000);
  });

  it("times out a receiver that never answers", async () => {
    await expect(deliver(definition("/slow"), delivery, AbortSignal.timeout(100))).rejects.toThrow(
      "timed out",
    );
  });
});

// node:http is handed its headers as a flat array (no setHeader each), so the transport writes
// what node:http adds itself for an object: Host, and Authorization from the URL's credentials.
describe("effect deliveries over node:http: what the URL puts in the request", () => {
  let server: Server;
  let port = 0;
  const seen: { url: string; headers: Record<string, string | string[] | undefined>; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => {
        body += chunk;
      });
      req.on("end", () => {
        seen.push({ url: req.url ?? "", headers: req.headers, body });
        // /hang is held unanswered: the caller aborts it.
        if (req.url === "/hang") hanging.resolve();
        else res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  let hanging = arrival();
  const transport = createNodeHttpTransport();
  const send = async (url: string, headers: Record<string, string>, body: string) => {
    const answer = await transport(url, headers, body, AbortSignal.timeout(5000));
    expect(answer.status).toBe(204);
    return seen.at(-1);
  };

  it("sends Host with the port, the path with its query, and the body's length in bytes", async () => {
    const body = JSON.stringify({ name: "café ☕" });
    const got = await send(`http://127.0.0.1:${port}/hooks/done?tenant=a&x=1`, { "x-one": "1" }, body);
    expect(got?.headers.host).toBe(`127.0.0.1:${port}`);
    expect(got?.url).toBe("/hooks/done?tenant=a&x=1");
    expect(got?.headers["content-length"]).toBe(String(Buffer.byteLength(body)));
    expect(got?.body).toBe(body);
    expect(got?.headers["x-one"]).toBe("1");
    expect(got?.headers.connection).toBe("keep-alive");
    expect(got?.headers.authorization).toBeUndefined();
  });

  it("turns the URL's credentials into Basic authorization, percent-decoded, as node:http does", async () => {
    const got = await send(`http://us%20er:p%40ss@127.0.0.1:${port}/in`, {}, "{}");
    expect(got?.headers.authorization).toBe(`Basic ${Buffer.from("us er:p@ss").toString("base64")}`);
    // Each URL is parsed once and kept: a second URL, then the first again, each gets its own.
    const other = await send(`http://127.0.0.1:${port}/other`, {}, "{}");
    expect(other?.headers.authorization).toBeUndefined();
    const again = await send(`http://us%20er:p%40ss@127.0.0.1:${port}/in`, {}, "{}");
    expect(again?.url).toBe("/in");
    expect(again?.headers.authorization).toBe(got?.headers.authorization);
  });

  it("lets the caller's own Host and Authorization stand in for the URL's", async () => {
    const got = await send(
      `http://u:p@127.0.0.1:${port}/in`,
      { Authorization: "Bearer t", host: "receiver.example" },
      "{}",
    );
    expect(got?.headers.authorization).toBe("Bearer t");
    expect(got?.headers.host).toBe("receiver.example");
  });

  it("refuses a header value node:http would refuse, before anything is sent", async () => {
    const before = seen.length;
    await expect(
      transport(`http://127.0.0.1:${port}/in`, { "x-bad": "a\r\nb" }, "{}", AbortSignal.timeout(5000)),
    ).rejects.toThrow(/Invalid character in header/);
    expect(seen.length).toBe(before);
  });

  // The transport listens on the signal itself (node:http's `signal` option costs a delivery
  // ~30,000 instructions): each request must stop on it, and leave no listener behind.
  it("stops a request when its signal is aborted, and leaves no abort listener on the signal", async () => {
    const done = new AbortController();
    await transport(`http://127.0.0.1:${port}/in`, {}, "{}", done.signal);
    expect(getEventListeners(done.signal, "abort")).toHaveLength(0);

    hanging = arrival();
    const stop = new AbortController();
    const answer = transport(`http://127.0.0.1:${port}/hang`, {}, "{}", stop.signal);
    await hanging.promise;
    expect(getEventListeners(stop.signal, "abort")).toHaveLength(1);
    stop.abort(new Error("lease lost"));
    await expect(answer).rejects.toMatchObject({ name: "AbortError", cause: new Error("lease lost") });
    expect(getEventListeners(stop.signal, "abort")).toHaveLength(0);
  });

  it("sends nothing for a signal aborted already", async () => {
    const before = seen.length;
    await expect(
      transport(`http://127.0.0.1:${port}/in`, {}, "{}", AbortSignal.abort(new Error("stopped"))),
    ).rejects.toMatchObject({ name: "AbortError" });
    expect(seen.length).toBe(before);
  });

  // The dispatcher gives the Node transport a DeliveryStop, no AbortSignal: the same stop, through
  // a plain callback.
  it("stops a request on a DeliveryStop, and removes its callback when the request settles", async () => {
    const done = deliveryStop();
    await transport(`http://127.0.0.1:${port}/in`, {}, "{}", done.stop);
    expect(done.listeners.size).toBe(0);

    hanging = arrival();
    const stopping = deliveryStop();
    const answer = transport(`http://127.0.0.1:${port}/hang`, {}, "{}", stopping.stop);
    await hanging.promise;
    expect(stopping.listeners.size).toBe(1);
    const reason = new DeliveryError("delivery timed out");
    stopping.fire(reason);
    await expect(answer).rejects.toMatchObject({ name: "AbortError", cause: reason });
    expect(stopping.listeners.size).toBe(0);
    expect(stopping.signalsRead).toBe(0);
  });

  it("sends nothing for a DeliveryStop stopped already", async () => {
    const before = seen.length;
    const stopped = deliveryStop();
    stopped.fire(new DeliveryError("delivery stopped: another dispatcher took over its claim"));
    await expect(transport(`http://127.0.0.1:${port}/in`, {}, "{}", stopped.stop)).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(seen.length).toBe(before);
  });
});

// maxSockets (serve passes effectDelivery.concurrency) reaches the plain-http client: no more
// connections than that to one receiver, the rest waiting their turn.
describe("effect deliveries over plain http: maxSockets", () => {
  it("opens at most maxSockets connections to a receiver and queues the rest", async () => {
    let connections = 0;
    const held: (() => void)[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => held.push(() => res.writeHead(204).end()));
    });
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`;
      const transport = createNodeHttpTransport({ maxSockets: 2 });
      const answers = [1, 2, 3, 4, 5].map(() => transport(url, {}, "{}", AbortSignal.timeout(5000)));
      let answered = 0;
      while (answered < answers.length) {
        while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
        expect(held.length).toBeLessThanOrEqual(2);
        (held.shift() as () => void)();
        answered++;
      }
      expect((await Promise.all(answers)).map((answer) => answer.status)).toEqual([204, 204, 204, 204, 204]);
      expect(connections).toBe(2);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("a DeliveryStop given to a deliverer whose transport takes an AbortSignal", () => {
  it("is handed over as its signal: the transport sees the stop's reason", async () => {
    const given: AbortSignal[] = [];
    const deliver = createHttpEffectDeliverer({
      transport: async (_url, _headers, _body, signal) => {
        given.push(signal);
        throw new Error("refused");
      },
    });
    const stopped = deliveryStop();
    stopped.fire(new DeliveryError("delivery timed out"));
    const definition = { name: "notify", url: "http://127.0.0.1:9/in" };
    // As the dispatcher calls it: through the url target's deliverWithStop.
    const target = httpEffectTarget(deliver);
    await expect(target.deliverWithStop?.(definition, delivery, stopped.stop)).rejects.toThrow(
      "POST http://127.0.0.1:9 failed: delivery timed out",
    );
    expect(given).toHaveLength(1);
    expect(given[0]?.aborted).toBe(true);
  });
});

/** A DeliveryStop as the lease makes one, with its callbacks in view. */
function deliveryStop() {
  const listeners = new Set<(reason: DeliveryError) => void>();
  let reason: DeliveryError | null = null;
  let signal: AbortSignal | null = null;
  const made = {
    listeners,
    signalsRead: 0,
    stop: {
      get reason() {
        return reason;
      },
      onStop(listener: (reason: DeliveryError) => void) {
        if (reason !== null) return () => {};
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      get signal() {
        made.signalsRead++;
        signal ??= reason === null ? new AbortController().signal : AbortSignal.abort(reason);
        return signal;
      },
    } satisfies DeliveryStop,
    fire(why: DeliveryError) {
      reason = why;
      for (const listener of listeners) listener(why);
      listeners.clear();
    },
  };
  return made;
}

/** A request's arrival at the server: `promise` resolves when the server calls `resolve`. */
function arrival(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
