import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Service, startService, tempDir } from "./helpers/service.js";

// A webhook refused before its body is read (here: no such provider) is answered at once, and the
// body still arriving is thrown away until the sender pauses. Closed while the sender still
// writes, the socket is reset by its next segment, and the sender loses the answer it has not read
// yet: a slow sender would see a broken connection and retry, instead of reading its 404 or 413.

const dir = tempDir();
let service: Service;
beforeAll(async () => {
  service = await startService({ db: dir.file("linger.db") });
});
afterAll(async () => {
  await service?.stop();
  dir.cleanup();
});

describe("a refused webhook whose sender is still sending", () => {
  it("keeps its connection while the body keeps coming (past 500 ms), and the sender reads its answer after", async () => {
    const url = new URL(service.url);
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    // Not read until the body is sent: the answer waits in the socket, as with a busy sender.
    socket.pause();
    const failures: string[] = [];
    socket.on("error", (error) => failures.push(String(error)));
    let received = "";
    // Explicitly paused: the listener takes nothing until resume().
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString();
    });
    const closed = new Promise((resolve) => socket.once("close", resolve));
    const piece = "x".repeat(32 * 1024);
    socket.write(
      `POST /webhooks/nobody HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: ${1024 * 1024}\r\n\r\n`,
    );
    // 10 pieces, 150 ms apart: still sending 1.35 s after the answer.
    for (let i = 0; i < 10; i++) {
      // (A write to a socket the server closed fails: the failure is recorded, the loop goes on.)
      await new Promise<void>((resolve) => socket.write(piece, () => resolve()));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    socket.resume();
    await closed;
    expect(failures).toEqual([]);
    expect(received).toMatch(/^HTTP\/1\.1 404 /);
    expect(received).toContain('"code":"unknown-provider"');
  });
});
