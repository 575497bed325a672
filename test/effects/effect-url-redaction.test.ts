import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { effectToJson } from "../../src/core/job-json.js";
import { redactCredentials, redactToOrigin, redactUrlsIn } from "../../src/core/url-redaction.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { DeliveryError } from "../../src/engine/delivery-error.js";
import { createDispatcher, type DeliveryAttempt } from "../../src/engine/dispatcher.js";
import type { Finality } from "../../src/engine/finality.js";
import {
  createHttpEffectDeliverer,
  type EffectTransport,
  fetchTransport,
} from "../../src/engine/http-effect-target.js";
import { createNodeHttpTransport } from "../../src/engine/node-http-transport.js";
import { engineOf } from "../helpers/engine.js";
import { makeEffect, makeJob } from "../helpers/records.js";
import { tempDir } from "../helpers/temp-dir.js";

// Every secret below has "SECRET" in it, so one check finds any of them.
const SECRET_PATH = "/services/T0SECRETA/B0SECRETB/xoxSECRETC";
const SECRET_QUERY = "?token=tokSECRETD&channel=ops";
const noSecret = (text: string) => expect(text).not.toMatch(/SECRET/i);

describe("redactToOrigin and redactUrlsIn", () => {
  it("keep scheme, host and port only", () => {
    expect(redactToOrigin(`https://hooks.example.com${SECRET_PATH}${SECRET_QUERY}`)).toBe(
      "https://hooks.example.com",
    );
    expect(redactToOrigin("http://user:pwSECRET@127.0.0.1:8443/x?token=SECRET#fragSECRET")).toBe(
      "http://127.0.0.1:8443",
    );
    expect(redactToOrigin("not a url SECRET")).toBe("[url]");
  });

  it("redactCredentials keeps the path (a poll URL names the job) but not user, password or key-like values", () => {
    expect(
      redactCredentials(
        "http://user:pwSECRET@127.0.0.1:8443/status/job-1?api_key=kSECRET&page=2&sig=sSECRET",
      ),
    ).toBe("http://***:***@127.0.0.1:8443/status/job-1?api_key=***&page=2&sig=***");
    expect(redactCredentials("not a url SECRET")).toBe("(invalid URL)");
  });

  it("cut every URL in a text, and the known URL's path, query and user wherever they appear alone", () => {
    const url = `https://user:pwSECRET@hooks.example.com:8443${SECRET_PATH}${SECRET_QUERY}`;
    const text = [
      `fetch failed for ${url}`,
      `(normalised: ${new URL(url).href})`,
      `path ${SECRET_PATH} query ${SECRET_QUERY}`,
      `token tokSECRETD, user pwSECRET`,
      `decoded ${decodeURIComponent(SECRET_PATH)}`,
      "and another ftp://elsewhere.example/SECRET-too.",
    ].join(" ");
    const redacted = redactUrlsIn(text, [url]);
    noSecret(redacted);
    expect(redacted).toContain("fetch failed for https://hooks.example.com:8443");
    expect(redacted).toContain("ftp://elsewhere.example");
    // Without the known URL the pieces on their own are not recognisable, but every URL still is.
    const generic = redactUrlsIn(`POST https://hooks.example.com${SECRET_PATH}${SECRET_QUERY} answered 503`);
    expect(generic).toBe("POST https://hooks.example.com answered 503");
  });

  it("no secret of a URL survives, however an error message quotes it (property)", () => {
    // Secrets are drawn as SECRET + letters/digits, so the check is one search.
    const secret = fc.stringMatching(/^[A-Za-z0-9]{4,24}$/).map((s) => `SECRET${s}`);
    const host = fc.constantFrom("hooks.slack.com", "127.0.0.1", "example.org", "[::1]");
    fc.assert(
      fc.property(
        fc.constantFrom("http", "https"),
        host,
        fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
        fc.array(secret, { minLength: 1, maxLength: 4 }),
        fc.option(secret, { nil: undefined }),
        fc.option(secret, { nil: undefined }),
        fc.constantFrom("raw", "href", "path", "decoded", "query", "value", "user"),
        (scheme, hostname, port, segments, token, password, form) => {
          const authority = `${password ? `u:${password}@` : ""}${hostname}${port ? `:${port}` : ""}`;
          const url = `${scheme}://${authority}/${segments.join("/")}${token ? `?token=${token}&x=1` : ""}`;
          const parsed = new URL(url);
          const quoted = {
            raw: url,
            href: parsed.href,
            path: parsed.pathname + parsed.search,
            decoded: decodeURIComponent(parsed.pathname),
            query: parsed.search,
            value: token ?? segments[0],
            user: password ?? segments[0],
          }[form];
          const redacted = redactUrlsIn(`request to ${quoted} failed (${quoted})`, [url]);
          expect(redacted).not.toContain("SECRET");
        },
      ),
      { numRuns: 500 },
    );
  });

  it("the API's JSON redacts a last_error stored before redaction existed", () => {
    const effect = makeEffect({
      jobId: "j1",
      lastError: `POST https://hooks.example.com${SECRET_PATH}${SECRET_QUERY} answered 404`,
    });
    expect(effectToJson(effect).lastError).toBe("POST https://hooks.example.com answered 404");
  });
});

describe("a delivery's error names the receiver by scheme, host and port only", () => {
  let server: Server;
  let base = "";
  let closedPort = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // A port nobody listens on: bind, note it, close.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const delivery = {
    type: "job.settled" as const,
    effect: "notify",
    idempotencyKey: "fin_0123",
    attempt: 1,
    job: makeJob({ id: "j1", state: "succeeded" }),
  };

  async function failure(transport: EffectTransport, url: string) {
    const deliver = createHttpEffectDeliverer({ transport });
    const error = await deliver({ name: "notify", url }, delivery, AbortSignal.timeout(5_000)).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DeliveryError);
    return (error as DeliveryError).message;
  }

  for (const [name, transport] of [
    ["fetch", fetchTransport],
    ["node:http", createNodeHttpTransport()],
  ] as const) {
    it(`over ${name}: a refusing receiver, a closed port`, async () => {
      const answered = await failure(transport, `${base}${SECRET_PATH}${SECRET_QUERY}`);
      expect(answered).toBe(`POST ${base} answered 503`);
      const refused = await failure(transport, `http://127.0.0.1:${closedPort}${SECRET_PATH}${SECRET_QUERY}`);
      expect(refused).toMatch(new RegExp(`^POST http://127\\.0\\.0\\.1:${closedPort} failed: `));
      noSecret(refused);
    });
  }

  it("over fetch: undici's own message quotes the whole URL, and is scrubbed", async () => {
    const url = `http://user:pwSECRET@127.0.0.1:${closedPort}${SECRET_PATH}${SECRET_QUERY}`;
    const message = await failure(fetchTransport, url);
    expect(message).toContain("includes credentials");
    expect(message).toContain(`http://127.0.0.1:${closedPort}`);
    noSecret(message);
  });
});

describe("the dispatcher stores and reports redacted errors only", () => {
  const dirs: { cleanup(): void }[] = [];
  const open: Finality[] = [];
  afterEach(async () => {
    for (const f of open.splice(0)) await f.close();
    for (const d of dirs.splice(0)) d.cleanup();
  });

  it("whatever the target or a library's deliverer says about the configured URL", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const url = `https://hooks.example.com${SECRET_PATH}${SECRET_QUERY}`;
    const finality = createFinality({
      store: { sqlite: dir.file("ledger.db") },
      effects: [
        { name: "hook", url },
        {
          name: "inline",
          handler: async () => {
            throw new Error(`my client could not reach ${url}`);
          },
        },
      ],
    });
    open.push(finality);
    await finality.ingest({
      provider: "acme",
      id: "j1",
      state: "succeeded",
      source: "webhook",
      deliveryId: "d1",
    });
    const attempts: DeliveryAttempt[] = [];
    await createDispatcher(finality, {
      // A deliverer of the library user's own that quotes the path alone, decoded.
      deliverUrl: async () => {
        throw new DeliveryError(
          `upstream said 404 for ${decodeURIComponent(SECRET_PATH)} (token tokSECRETD)`,
        );
      },
      onAttempt: (attempt) => attempts.push(attempt),
    }).runOnce();
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) noSecret(attempt.error ?? "");
    const rows = (await engineOf(finality).store.listEffects({ jobId: "j1" })).items;
    expect(rows.map((row) => row.status)).toEqual(["pending", "pending"]);
    for (const row of rows) noSecret(row.lastError ?? "");
    expect(rows.map((row) => row.lastError).sort()).toEqual([
      "my client could not reach https://hooks.example.com",
      "upstream said 404 for [redacted] (token [redacted])",
    ]);
  });
});
