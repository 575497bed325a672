import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { jsonLinesLogger } from "../../src/host/node/json-lines-logger.js";

// The request lines skip pino's serializer: they must be the very lines pino writes, byte for
// byte (a fixed time makes them comparable), for every kind of value a line carries.

function capture(level: string) {
  const lines: string[] = [];
  const logger = pino(
    { level, timestamp: () => ',"time":1764633600000' },
    { write: (line: string) => void lines.push(line) },
  );
  return { logger, lines };
}

const cases: [string, Record<string, unknown>, string | undefined][] = [
  [
    "a webhook's request line",
    {
      method: "POST",
      path: "/webhooks/acme",
      route: "/webhooks/:provider",
      status: 200,
      ms: 1.25,
      provider: "acme",
      deliveryId: "msg_2bVxyz",
      jobId: "job-1",
      outcome: "applied",
    },
    "request",
  ],
  [
    "strings that need escaping",
    {
      quote: 'a "quoted" \\ path',
      control: "tab\there\nnewline\u0001",
      unicode: "café ☕ \ud83d\ude00",
      long: "x".repeat(150),
      'key "with" quotes': "v",
    },
    'msg with "quotes"',
  ],
  [
    "numbers, booleans, null and undefined",
    {
      n: 0,
      neg: -3.5,
      nan: Number.NaN,
      inf: Number.POSITIVE_INFINITY,
      t: true,
      f: false,
      none: null,
      gone: undefined,
    },
    "values",
  ],
  ["no fields", {}, "stopped"],
  ["no message", { a: "b" }, undefined],
  ["an object falls back to pino", { err: new Error("boom"), nested: { a: 1 } }, "request failed"],
];

describe("jsonLinesLogger", () => {
  for (const [name, fields, message] of cases) {
    for (const level of ["info", "warn", "error"] as const) {
      it(`writes what pino writes: ${name} (${level})`, () => {
        const direct = capture("info");
        const fast = capture("info");
        direct.logger[level](fields, message);
        jsonLinesLogger(fast.logger)[level](fields, message);
        expect(fast.lines).toHaveLength(1);
        // The stack trace of the error differs only if the lines were built differently.
        expect(fast.lines).toEqual(direct.lines);
      });
    }
  }

  it("writes what pino writes line after line, as repeated values are kept and unique ones are not", () => {
    const direct = capture("info");
    const fast = capture("info");
    const log = jsonLinesLogger(fast.logger);
    const repeated = [
      "POST",
      "/webhooks/acme",
      'a "quoted" \\ value',
      "caf\u00e9",
      "x".repeat(64),
      "y".repeat(65),
    ];
    // Past the kept values' bound (512): the later lines meet a full table.
    for (let n = 0; n < 1_200; n++) {
      const fields = {
        method: repeated[n % repeated.length],
        // New on every line: fills the kept values' table (an id is never kept).
        path: `/p/${n}`,
        jobId: `job-${n}`,
        outcome: n % 3 ? "applied" : "stale",
      };
      direct.logger.info(fields, n % 2 ? "request" : "request refused");
      log.info(fields, n % 2 ? "request" : "request refused");
    }
    expect(fast.lines).toHaveLength(1_200);
    expect(fast.lines).toEqual(direct.lines);
  });

  it("writes nothing below the logger's level, as pino does", () => {
    const { logger, lines } = capture("warn");
    const log = jsonLinesLogger(logger);
    log.info({ status: 200 }, "request");
    expect(lines).toEqual([]);
    log.warn({ status: 400 }, "request refused");
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(["request refused"]);
    // A level changed at run time is followed.
    logger.level = "error";
    log.warn({ status: 400 }, "request refused");
    expect(lines).toHaveLength(1);
  });

  it("escapes a lone surrogate (pino writes it raw, which its UTF-8 encoding turns into U+FFFD)", () => {
    const { logger, lines } = capture("info");
    jsonLinesLogger(logger).info({ jobId: "\ud800 alone" }, "request");
    expect(lines[0]).toContain('"jobId":"\\ud800 alone"');
    expect(JSON.parse(lines[0] as string).jobId).toBe("\ud800 alone");
  });

  it("carries pino's pid and hostname", () => {
    const { logger, lines } = capture("info");
    jsonLinesLogger(logger).info({ status: 200 }, "request");
    const line = JSON.parse(lines[0] as string);
    expect(line).toMatchObject({ level: 30, pid: process.pid, status: 200, msg: "request" });
    expect(typeof line.hostname).toBe("string");
  });
});
