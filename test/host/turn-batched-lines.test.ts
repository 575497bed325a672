import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { jsonLinesLogger } from "../../src/host/node/json-lines-logger.js";
import { type LineDestination, turnBatchedLines } from "../../src/host/node/turn-batched-lines.js";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function recorder() {
  const calls: string[] = [];
  const destination: LineDestination = {
    write: (text) => calls.push(`write ${text}`),
    flush: (callback) => {
      calls.push("flush");
      callback?.();
    },
    flushSync: () => calls.push("flushSync"),
  };
  return { calls, destination };
}

describe("turnBatchedLines", () => {
  it("hands a turn's lines to the destination as one write, in order, once the turn ends", async () => {
    const { calls, destination } = recorder();
    const lines = turnBatchedLines(destination);
    lines.write("a\n");
    lines.write("b\n");
    lines.write("c\n");
    expect(calls).toEqual([]);
    await nextTurn();
    expect(calls).toEqual(["write a\nb\nc\n"]);
    lines.write("d\n");
    await nextTurn();
    expect(calls).toEqual(["write a\nb\nc\n", "write d\n"]);
    lines.detach();
  });

  it("with `bytes`, hands a turn's lines over as one UTF-8 Buffer", async () => {
    const written: Uint8Array[] = [];
    const destination: LineDestination<Uint8Array> = {
      write: (chunk) => written.push(chunk),
      flush: (callback) => callback?.(),
      flushSync: () => {},
    };
    const lines = turnBatchedLines(destination, { bytes: true });
    lines.write("caf\u00e9\n");
    lines.write("\u{1F600}\n");
    await nextTurn();
    expect(written).toHaveLength(1);
    expect(Buffer.isBuffer(written[0])).toBe(true);
    expect(Buffer.from(written[0] as Uint8Array).toString("utf8")).toBe("caf\u00e9\n\u{1F600}\n");
    lines.detach();
  });

  it("writes what is pending before a flush or a flushSync, and on detach", async () => {
    const { calls, destination } = recorder();
    const lines = turnBatchedLines(destination);
    lines.write("a\n");
    lines.flush();
    lines.write("b\n");
    lines.flushSync();
    lines.write("c\n");
    lines.detach();
    expect(calls).toEqual(["write a\n", "flush", "write b\n", "flushSync", "write c\n"]);
    await nextTurn();
    expect(calls).toHaveLength(5);
  });

  it("keeps pino's own lines and the request lines in the order they were logged", async () => {
    const { calls, destination } = recorder();
    const logger = pino({ base: null, timestamp: false }, turnBatchedLines(destination));
    const requests = jsonLinesLogger(logger);
    requests.info({ status: 200 }, "request");
    logger.warn({ err: { message: "x" } }, "pino's own");
    requests.info({ status: 202 }, "request");
    await nextTurn();
    expect(calls).toHaveLength(1);
    const messages = (calls[0] ?? "")
      .replace(/^write /, "")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { msg: string; status?: number });
    expect(messages.map((m) => `${m.msg} ${m.status ?? ""}`.trim())).toEqual([
      "request 200",
      "pino's own",
      "request 202",
    ]);
  });

  it.each([
    ["string", "{}", ""],
    ["buffer", "{ bytes: true }", ', contentMode: "buffer"'],
  ])(
    "writes the lines of the turn a process exits in (pino's SonicBoom in %s mode, a real file)",
    (_, options, mode) => {
      const file = join(mkdtempSync(join(tmpdir(), "finality-lines-")), "out.log");
      const script = `
      const { pino } = await import("pino");
      const { turnBatchedLines } = await import(${JSON.stringify(new URL("../../dist/host/node/turn-batched-lines.js", import.meta.url).href)});
      const logger = pino({ base: null }, turnBatchedLines(pino.destination({ dest: ${JSON.stringify(file)}, sync: false, minLength: 4096${mode} }), ${options}));
      await new Promise((resolve) => setTimeout(resolve, 50));
      logger.info("first");
      logger.info("second");
      process.exit(3);
    `;
      const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
      expect(child.stderr).toBe("");
      expect(child.status).toBe(3);
      const lines = readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).msg);
      expect(lines).toEqual(["first", "second"]);
    },
  );
});
