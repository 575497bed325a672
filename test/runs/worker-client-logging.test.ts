import { createServer } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createWorker, rateLimitedErrorLog } from "../../src/worker/worker-client.js";

// A worker whose server is down says so at once, by default, and does not flood its output.

/** A port nothing listens on: bound by the kernel, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the worker client's default error log", () => {
  it("prints a failed claim at once, naming the URL and the error code", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    let logged!: (line: string) => void;
    const first = new Promise<string>((resolve) => {
      logged = resolve;
    });
    vi.spyOn(console, "error").mockImplementation((line: unknown) => logged(String(line)));
    const worker = createWorker({
      baseUrl: url,
      workerId: "w-down",
      waitSeconds: 1,
      handler: async () => null,
    });
    worker.start();
    try {
      expect(await first).toMatch(
        new RegExp(`^finality worker: POST ${url}/v1/workers/w-down/claim: unreachable: .*ECONNREFUSED`),
      );
    } finally {
      await worker.stop();
    }
  });

  it("prints at most one line per interval, and counts the ones it held back", () => {
    const lines: string[] = [];
    let now = 0;
    const log = rateLimitedErrorLog({
      write: (line) => lines.push(line),
      intervalMs: 10_000,
      now: () => now,
    });
    log(new Error("down"));
    now = 1000;
    log(new Error("down"));
    now = 9999;
    log(new Error("down"));
    expect(lines).toEqual(["finality worker: down"]);
    now = 10_000;
    log(new Error("still down"));
    expect(lines).toEqual([
      "finality worker: down",
      "finality worker: still down (2 more since the last line)",
    ]);
  });
});
