import { describe, expect, it } from "vitest";
import { runNodeScript, selfSignedCertificate } from "../helpers/tls.js";
import { tempDir } from "../http/helpers/service.js";

// Plain http goes through the lean client; https through node:https (node-http-transport.ts).
// This is the https side, against a real TLS server whose self-signed certificate the child
// process trusts (NODE_EXTRA_CA_CERTS is read at start, hence the child; it runs the built dist).

describe("effect deliveries over https", () => {
  it("POSTs the head node:http would write, reads the answer's status and Retry-After, and stops on its signal", async () => {
    const dir = tempDir();
    try {
      const { key, cert } = selfSignedCertificate(dir);
      const transport = new URL("../../dist/engine/node-http-transport.js", import.meta.url).href;
      const script = `
        const https = await import("node:https");
        const { readFileSync } = await import("node:fs");
        const { createNodeHttpTransport } = await import(${JSON.stringify(transport)});
        const seen = [];
        let hanging = null;
        const server = https.createServer({ key: readFileSync(${JSON.stringify(key)}), cert: readFileSync(${JSON.stringify(cert)}) },
          (request, response) => {
            let body = "";
            request.setEncoding("utf8");
            request.on("data", (chunk) => { body += chunk; });
            request.on("end", () => {
              seen.push({ url: request.url, headers: request.headers, body });
              if (request.url === "/hang") hanging();
              else response.writeHead(429, { "retry-after": "5" }).end("slow down");
            });
          });
        server.listen(0, "127.0.0.1", async () => {
          const port = server.address().port;
          const send = createNodeHttpTransport({ maxSockets: 2 });
          const body = JSON.stringify({ name: "café" });
          const answer = await send("https://u:p@127.0.0.1:" + port + "/in?x=1", { "x-one": "1" }, body, AbortSignal.timeout(5000));
          const stop = new AbortController();
          const arrived = new Promise((resolve) => { hanging = resolve; });
          const stopped = send("https://127.0.0.1:" + port + "/hang", {}, "{}", stop.signal).catch((error) => ({ name: error.name, cause: error.cause.message }));
          await arrived;
          stop.abort(new Error("lease lost"));
          console.log(JSON.stringify({ answer, stopped: await stopped, seen: seen[0], port }));
          server.closeAllConnections();
          server.close();
        });`;
      const { code, out, err } = await runNodeScript(script, { NODE_EXTRA_CA_CERTS: cert });
      expect({ code, err }).toEqual({ code: 0, err: "" });
      const got = JSON.parse(out);
      expect(got.answer).toEqual({ status: 429, retryAfter: "5" });
      expect(got.stopped).toEqual({ name: "AbortError", cause: "lease lost" });
      expect(got.seen.url).toBe("/in?x=1");
      expect(got.seen.body).toBe(JSON.stringify({ name: "café" }));
      expect(got.seen.headers).toMatchObject({
        host: `127.0.0.1:${got.port}`,
        authorization: `Basic ${Buffer.from("u:p").toString("base64")}`,
        "content-length": String(Buffer.byteLength(JSON.stringify({ name: "café" }))),
        "x-one": "1",
        connection: "keep-alive",
      });
    } finally {
      dir.cleanup();
    }
  });
});
