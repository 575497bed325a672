import { getEventListeners, once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { build } from "esbuild";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createFinalityClient, FinalityClientError } from "../../src/client/index.js";
import { hasNodeHttp } from "../../src/client/node-send.js";
import { runNodeScript, selfSignedCertificate } from "../helpers/tls.js";
import { tempDir } from "../http/helpers/service.js";

// The client's transport on Node: node:http over a keep-alive agent, not fetch, unless the
// caller gives a fetch. Each failure is still a FinalityClientError that says what happened.

const servers: Server[] = [];
afterEach(async () => {
  vi.unstubAllGlobals();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A real server on loopback; `connections` counts the TCP connections it accepted. */
async function serve(handle: (request: IncomingMessage, response: ServerResponse) => void) {
  const server = createServer(handle);
  servers.push(server);
  const sockets: Socket[] = [];
  server.on("connection", (socket) => sockets.push(socket));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, connections: () => sockets.length };
}

const healthy = (_request: IncomingMessage, response: ServerResponse) => {
  response.setHeader("content-type", "application/json");
  response.end(JSON.stringify({ status: "ok" }));
};

async function failure(promise: Promise<unknown>): Promise<FinalityClientError> {
  const error = await promise.then(
    () => new Error("the call succeeded"),
    (caught: unknown) => caught,
  );
  if (!(error instanceof FinalityClientError)) throw error;
  return error;
}

describe("the client's transport on Node", () => {
  it("is node:http, not the global fetch, when no fetch is given; and a given fetch is used", async () => {
    const { url } = await serve(healthy);
    const globalFetch = vi.fn(() => Promise.reject(new Error("the global fetch was called")));
    vi.stubGlobal("fetch", globalFetch);
    await expect(createFinalityClient({ baseUrl: url }).health()).resolves.toEqual({ status: "ok" });
    expect(globalFetch).not.toHaveBeenCalled();

    vi.unstubAllGlobals();
    const given = vi.fn((input: string | URL | Request, init?: RequestInit) => fetch(input, init));
    await expect(createFinalityClient({ baseUrl: url, fetch: given }).health()).resolves.toEqual({
      status: "ok",
    });
    expect(given).toHaveBeenCalledTimes(1);
  });

  it("keeps its connection alive across calls, and sends the body, its length and the headers", async () => {
    const seen: {
      method?: string;
      length?: string;
      type?: string;
      auth?: string;
      agent?: string;
      accept?: string;
      body: string;
    }[] = [];
    const { url, connections } = await serve((request, response) => {
      let body = "";
      request.setEncoding("utf8");
      request.on("data", (chunk: string) => {
        body += chunk;
      });
      request.on("end", () => {
        seen.push({
          method: request.method,
          length: request.headers["content-length"],
          type: request.headers["content-type"],
          auth: request.headers.authorization,
          agent: request.headers["user-agent"],
          accept: request.headers.accept,
          body,
        });
        response.statusCode = 201;
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify({ created: true, run: { id: "r-1", attempts: [] } }));
      });
    });
    const client = createFinalityClient({ baseUrl: url, token: "t0k3n" });
    for (const n of [1, 2, 3]) await client.enqueueRun({ kind: "render", input: { n, text: "é" } });
    // Another client of the same process shares the connection (a client made per call must not
    // leave one open each).
    await createFinalityClient({ baseUrl: url, token: "t0k3n" }).enqueueRun({ kind: "render" });
    expect(connections()).toBe(1);
    const body = JSON.stringify({ kind: "render", input: { n: 3, text: "é" } });
    expect(seen[2]).toEqual({
      method: "POST",
      length: String(Buffer.byteLength(body)),
      type: "application/json",
      auth: "Bearer t0k3n",
      // Some firewalls refuse a request without a user agent (fetch sent "node").
      agent: "finality-client",
      accept: "application/json",
      body,
    });
  });

  it("a refused connection, a server that never answers, an answer cut short, an abort: each is `unreachable`", async () => {
    const { url: closedUrl } = await serve(healthy);
    for (const server of servers.splice(0)) server.close();
    const refused = await failure(createFinalityClient({ baseUrl: closedUrl }).health());
    expect(refused).toMatchObject({ kind: "unreachable", status: 0, retryable: true });
    expect(refused.message).toMatch(/unreachable: .*ECONNREFUSED/);

    const { url: silentUrl } = await serve(() => {});
    const started = performance.now();
    const silent = await failure(createFinalityClient({ baseUrl: silentUrl, timeoutMs: 100 }).health());
    expect(silent).toMatchObject({ kind: "unreachable", retryable: true });
    expect(silent.message).toMatch(/unreachable: ETIMEDOUT: no answer within 100 ms/);
    expect(performance.now() - started).toBeLessThan(5_000);

    const { url: cutUrl } = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      response.write('{"status":');
      setImmediate(() => response.destroy());
    });
    const cut = await failure(createFinalityClient({ baseUrl: cutUrl }).health());
    expect(cut).toMatchObject({ kind: "unreachable", retryable: true });

    const { url: slowUrl } = await serve(() => {});
    const controller = new AbortController();
    const call = failure(
      createFinalityClient({ baseUrl: slowUrl }).listSettlements({}, { signal: controller.signal }),
    );
    controller.abort();
    expect(await call).toMatchObject({ kind: "unreachable" });
  });

  it("many calls on one signal add one abort listener to it, whatever their number, and its abort ends them all", async () => {
    let arrived = 0;
    let allArrived: () => void = () => {};
    const arriving = new Promise<void>((resolve) => {
      allArrived = resolve;
    });
    const { url } = await serve(() => {
      arrived += 1;
      if (arrived === 15) allArrived();
    });
    const client = createFinalityClient({ baseUrl: url });
    const controller = new AbortController();
    const calls = Array.from({ length: 15 }, () =>
      failure(client.claimRun("w-1", { waitSeconds: 30 }, { signal: controller.signal })),
    );
    await arriving;
    // A listener per call would pass EventTarget's leak warning at 11 (a worker's claims share
    // its stop signal); fetch's AbortSignal.any added none.
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    controller.abort();
    for (const error of await Promise.all(calls)) {
      expect(error).toMatchObject({ kind: "unreachable" });
      expect(error.message).toMatch(/ABORT_ERR/);
    }
    // A call on a signal aborted already is refused at once.
    const late = await failure(client.claimRun("w-1", {}, { signal: controller.signal }));
    expect(late.message).toMatch(/ABORT_ERR/);

    // Calls that end take themselves off: the one listener stays, whatever the number of calls.
    const { url: okUrl } = await serve((_request, response) => {
      response.statusCode = 204;
      response.end();
    });
    const quick = createFinalityClient({ baseUrl: okUrl });
    const kept = new AbortController();
    for (let i = 0; i < 12; i++) await quick.claimRun("w-1", {}, { signal: kept.signal });
    expect(getEventListeners(kept.signal, "abort")).toHaveLength(1);
  });

  it("answers a 204 with no body, a non-JSON 2xx as `not-json`, a problem as `http`", async () => {
    const { url } = await serve((request, response) => {
      if (request.url?.endsWith("/claim")) {
        response.statusCode = 204;
        response.end();
        return;
      }
      if (request.url === "/readyz") {
        response.statusCode = 200;
        response.end("<html>a proxy</html>");
        return;
      }
      response.statusCode = 404;
      response.setHeader("content-type", "application/problem+json");
      response.end(
        JSON.stringify({ type: "about:blank", title: "Not Found", status: 404, detail: "no such run" }),
      );
    });
    const client = createFinalityClient({ baseUrl: url });
    expect(await client.claimRun("w-1", { waitSeconds: 0 })).toBeNull();
    expect(await failure(client.ready())).toMatchObject({ kind: "not-json", status: 200 });
    const missing = await failure(client.getRun("r-404"));
    expect(missing).toMatchObject({ kind: "http", status: 404, problem: { detail: "no such run" } });
    expect(missing.message).toMatch(/404 no such run$/);
  });

  it("is chosen on Node, not on Cloudflare Workers nor Deno (whose node:http is a layer of its own)", () => {
    expect(hasNodeHttp()).toBe(true);
    vi.stubGlobal("navigator", { userAgent: "Cloudflare-Workers" });
    expect(hasNodeHttp()).toBe(false);
    vi.unstubAllGlobals();
    vi.stubGlobal("Deno", { version: { deno: "2.1.0" } });
    expect(hasNodeHttp()).toBe(false);
  });

  it("a server that answers before the whole body went out, then closes: an `http` error, not a crash", async () => {
    // A 413 to a report over the body limit, the connection closed while the rest is still being
    // written: the late EPIPE must not reach a pooled socket without a listener (the process's end).
    const { url } = await serve((request, response) => {
      if (request.method === "GET") {
        healthy(request, response);
        return;
      }
      response.writeHead(413, { "content-type": "application/problem+json" });
      response.end(JSON.stringify({ type: "about:blank", title: "Payload Too Large", status: 413 }));
      setTimeout(() => request.socket.destroySoon(), 20);
    });
    const client = createFinalityClient({ baseUrl: url });
    const big = "x".repeat(30 * 1024 * 1024);
    for (let i = 0; i < 2; i++) {
      const refused = await failure(client.enqueueRun({ kind: "render", input: { big } }));
      expect(["http", "unreachable"]).toContain(refused.kind);
    }
    // Nothing left behind: the next call goes out on a fresh connection and is answered.
    await expect(client.health()).resolves.toEqual({ status: "ok" });
  });

  it("answers with a UTF-8 byte-order mark read as fetch reads them", async () => {
    const { url } = await serve((_request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(`\uFEFF${JSON.stringify({ status: "ok" })}`);
    });
    await expect(createFinalityClient({ baseUrl: url }).health()).resolves.toEqual({ status: "ok" });
  });

  it("closes a connection idle for 4 s: a proxy in front of the server may drop it silently", async () => {
    const closed: Promise<unknown>[] = [];
    const server = createServer(healthy);
    server.keepAliveTimeout = 60_000; // the server would keep it: the client must close it
    servers.push(server);
    server.on("connection", (socket) => closed.push(once(socket, "close")));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const started = performance.now();
    await createFinalityClient({ baseUrl: `http://127.0.0.1:${port}` }).health();
    expect(closed).toHaveLength(1);
    await closed[0];
    expect(performance.now() - started).toBeGreaterThanOrEqual(3_900);
  }, 15_000);

  it("bundles for a browser or a Worker: node:http is imported by a specifier bundlers leave alone", async () => {
    const result = await build({
      entryPoints: [new URL("../../src/client/index.ts", import.meta.url).pathname],
      bundle: true,
      write: false,
      format: "esm",
      platform: "browser",
      logLevel: "silent",
    });
    expect(result.errors).toEqual([]);
    expect(result.outputFiles[0]?.text).toContain("createFinalityClient");
  });

  it("speaks https to a server whose certificate the process trusts (NODE_EXTRA_CA_CERTS)", async () => {
    const dir = tempDir();
    try {
      const { key, cert } = selfSignedCertificate(dir);
      const script = `
        const https = await import("node:https");
        const { readFileSync } = await import("node:fs");
        const { createFinalityClient } = await import(${JSON.stringify(new URL("../../dist/client/index.js", import.meta.url).href)});
        const server = https.createServer({ key: readFileSync(${JSON.stringify(key)}), cert: readFileSync(${JSON.stringify(cert)}) },
          (request, response) => response.end(JSON.stringify({ status: "ok", protocol: "https" })));
        server.listen(0, "127.0.0.1", async () => {
          globalThis.fetch = () => { throw new Error("fetch was called"); };
          const client = createFinalityClient({ baseUrl: "https://127.0.0.1:" + server.address().port });
          console.log(JSON.stringify(await client.health()));
          server.close();
        });`;
      const { code, out, err } = await runNodeScript(script, { NODE_EXTRA_CA_CERTS: cert });
      expect({ code, err }).toEqual({ code: 0, err: "" });
      expect(JSON.parse(out)).toEqual({ status: "ok", protocol: "https" });
    } finally {
      dir.cleanup();
    }
  });
});
