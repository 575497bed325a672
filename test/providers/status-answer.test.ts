import { describe, expect, it, vi } from "vitest";
import type { Observation } from "../../src/core/model.js";
import { observedIfSame } from "../../src/providers/status-client.js";

// Every adapter's poll goes through it (Anthropic, OpenAI, Gemini, Replicate): an answer about
// another object must never become this job's observation.

const observation: Observation = { provider: "p", id: "job-1", state: "running", source: "reconcile" };

describe("observedIfSame", () => {
  it("takes the answer for the object asked for", () => {
    expect(observedIfSame("job-1", "job-1", () => observation)).toEqual({ kind: "observed", observation });
  });

  it("refuses an answer for another object, and does not read it", () => {
    const read = vi.fn(() => observation);
    expect(observedIfSame("job-1", "job-2", read)).toEqual({
      kind: "failed",
      error: 'status API answered for "job-2"',
    });
    expect(observedIfSame("job-1", undefined, read)).toEqual({
      kind: "failed",
      error: 'status API answered for "undefined"',
    });
    expect(read).not.toHaveBeenCalled();
  });
});
