import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/temp-dir.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { type startEdge as StartEdge, startEdge } from "./edge-server.js";
import { liveBytes, MiB, rawClient } from "./memory.js";

// Slow webhook senders against the real Node server (the fast path `serve` uses): each sends its
// headers and part of its body, then stops. An unsigned one is refused before its body is read;
// signed ones together hold no more than `server.bodyBytesInFlight` (docs/operations.md).

const dir = tempDir("finality-slow-senders-");
let edge: Awaited<ReturnType<typeof StartEdge>> | undefined;
afterEach(async () => {
  await edge?.close();
  edge = undefined;
});

const head = (length: number, headers: Record<string, string>) =>
  `POST /webhooks/acme HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${length}\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")}\r\n`;

describe("slow webhook senders", () => {
  it("without signature headers are answered 401 at once, their bodies never held", async () => {
    edge = await startEdge(dir.file(`unsigned-${Date.now()}.db`));
    const before = liveBytes();
    const senders = await Promise.all(Array.from({ length: 100 }, () => rawClient(edge?.url as string)));
    // Half of a 512 KB body each, then nothing: the server must not wait for the rest.
    for (const sender of senders)
      await sender.write(head(512 * 1024, { "content-type": "application/json" }) + "x".repeat(256 * 1024));
    const statuses = await Promise.all(senders.map((sender) => sender.status()));
    const growth = liveBytes() - before;
    for (const sender of senders) sender.close();
    expect(new Set(statuses)).toEqual(new Set(["HTTP/1.1 401 Unauthorized"]));
    // 100 connections, 25 MB sent: what stays is the connections' own bookkeeping.
    expect(growth / senders.length).toBeLessThan(64 * 1024);
  }, 60_000);

  it("with valid signatures hold no more than server.bodyBytesInFlight; the rest are refused 503 at once", async () => {
    const inFlight = 8 * MiB;
    edge = await startEdge(dir.file(`signed-${Date.now()}.db`), { bodyBytesInFlight: inFlight });
    const declared = 512 * 1024;
    const senders = 64;
    // A declared body is reserved whole: 16 fit, the other 48 must be answered without their bodies.
    const fit = inFlight / declared;
    const before = liveBytes();
    const clients = await Promise.all(Array.from({ length: senders }, () => rawClient(edge?.url as string)));
    const answered: string[] = [];
    let allRefused: () => void = () => {};
    const refused = new Promise<void>((resolve) => {
      allRefused = resolve;
    });
    for (const [i, client] of clients.entries()) {
      const body = JSON.stringify({ jobId: `slow-${i}`, state: "running", pad: "" });
      const padded = `${body.slice(0, -2)}${"x".repeat(declared - body.length)}"}`;
      // Signed over the whole body, of which only half is ever sent: the headers pass every check.
      await client.write(head(declared, signWith(SECRET, padded)) + padded.slice(0, declared / 2));
      void client.status().then((status) => {
        if (status !== null) answered.push(status);
        if (answered.length === senders - fit) allRefused();
      });
    }
    await refused;
    const growth = liveBytes() - before;
    expect(answered).toEqual(Array.from({ length: senders - fit }, () => "HTTP/1.1 503 Service Unavailable"));
    for (const client of clients) client.close();
    // The 16 held bodies (half-sent: 4 MiB) stay under the budget; without it, 64 × 256 KiB = 16 MiB.
    expect(growth).toBeLessThan(inFlight + senders * 64 * 1024);
  }, 60_000);
});
