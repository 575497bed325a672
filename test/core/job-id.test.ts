import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FinalityError } from "../../src/core/errors.js";
import { checkStorableJobKey, idProblem, JOB_ID_MAX_LENGTH } from "../../src/core/job-id.js";
import {
  parseIntentKey,
  parseJobKey,
  parseObservation,
  parseRegistration,
} from "../../src/core/validation.js";
import { readAnthropicEvent } from "../../src/providers/anthropic/anthropic-adapter.js";
import { readGeminiEvent } from "../../src/providers/gemini/gemini-adapter.js";
import { parseGenericWebhook } from "../../src/providers/generic/generic-webhook.js";
import { readOpenAIEvent } from "../../src/providers/openai/openai-adapter.js";

// Issue #33, defects 11 and 12: an id no URL can carry ("." and "..") was registered and then
// unreachable; two ids differing only in half a surrogate pair became one row on PostgreSQL.

const REFUSED: [string, string][] = [
  ["empty", ""],
  ["a dot", "."],
  ["two dots", ".."],
  ["a lone high surrogate", "x\ud800"],
  ["a lone low surrogate", "x\udc00"],
  ["a reversed pair", "\udc00\ud800"],
  ["a control character", "a\u0000b"],
  ["one character too long", "x".repeat(JOB_ID_MAX_LENGTH + 1)],
];

const ACCEPTED = [
  "...",
  "./",
  "a/..",
  "resp_1",
  "batches/x",
  "%2e%2e",
  "é 😀 ?#%",
  "x".repeat(JOB_ID_MAX_LENGTH),
];

describe("the job id rule (core/job-id.ts)", () => {
  it.each(REFUSED)("refuses %s", (_name, id) => {
    expect(idProblem(id)).not.toBeNull();
  });

  it.each(ACCEPTED)("accepts %j", (id) => {
    expect(idProblem(id)).toBeNull();
  });

  it("names what is wrong", () => {
    expect(idProblem("..")).toBe('must not be "..": no URL can carry it');
    expect(idProblem("x\ud800")).toMatch(/well-formed Unicode/);
  });

  it("accepts exactly the strings that are well-formed, non-empty, bounded, printable and no dot segment", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 8 }), (id) => {
        const expected =
          id.length > 0 &&
          id.isWellFormed() &&
          // biome-ignore lint/suspicious/noControlCharactersInRegex: the oracle restates the rule.
          !/[\u0000-\u001f\u007f-\u009f]/.test(id) &&
          id !== "." &&
          id !== "..";
        expect(idProblem(id) === null).toBe(expected);
      }),
    );
  });
});

describe("every parser of an id uses the rule", () => {
  const parsers: [string, (id: string) => unknown][] = [
    ["registration", (id) => parseRegistration({ provider: "acme", id })],
    ["an observation", (id) => parseObservation({ provider: "acme", id, state: "running", source: "api" })],
    ["a job key (reads)", (id) => parseJobKey("acme", id)],
    ["an intent key", (id) => parseIntentKey(id)],
    ["the store's own check", (id) => checkStorableJobKey({ provider: "acme", id })],
    [
      "a generic webhook body",
      (id) =>
        parseGenericWebhook(new TextEncoder().encode(JSON.stringify({ jobId: id, state: "x" })), "acme", "d"),
    ],
    ["an OpenAI event", (id) => readOpenAIEvent({ type: "response.completed", data: { id } })],
    ["an Anthropic event", (id) => readAnthropicEvent({ data: { type: "message_batch.ended", id } })],
    ["a Gemini event", (id) => readGeminiEvent({ type: "interaction.completed", data: { id } })],
  ];

  it("a Gemini batch event's bare id is held to the rule with its batches/ prefix", () => {
    const bare = "b".repeat(JOB_ID_MAX_LENGTH - 2);
    expect(() => readGeminiEvent({ type: "batch.succeeded", data: { id: bare } })).toThrow(FinalityError);
    expect(readGeminiEvent({ type: "batch.succeeded", data: { id: "b".repeat(10) } })).toMatchObject({
      id: `batches/${"b".repeat(10)}`,
    });
  });

  for (const [what, parse] of parsers) {
    it.each(REFUSED)(`${what}: refuses %s with a typed error`, (_name, id) => {
      expect(() => parse(id)).toThrow(FinalityError);
    });
    it(`${what}: accepts "..." and "a/.."`, () => {
      expect(() => parse("...")).not.toThrow();
      expect(() => parse("a/..")).not.toThrow();
    });
  }
});
