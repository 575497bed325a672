import { describe, expect, it } from "vitest";
import { parseListPage } from "../../src/providers/generic/generic-lister.js";

// The generic list API's answer is a contract: exactly this shape, anything else refused.

describe("the generic list answer", () => {
  it("reads jobs, newest last, with the optional fields and the state table", () => {
    const page = parseListPage(
      JSON.stringify({
        data: [
          {
            jobId: "a",
            state: "DONE",
            seq: 3,
            updateTime: 1_767_225_600,
            createdAt: "2026-01-01T00:00:00Z",
            tag: "k",
          },
          { jobId: "b", state: "running", createdAt: 1_767_225_600_000 },
        ],
        nextCursor: "c2",
      }),
      { DONE: "succeeded" },
    );
    expect(page.nextCursor).toBe("c2");
    expect(page.jobs).toEqual([
      {
        id: "a",
        state: "succeeded",
        rawState: "DONE",
        seq: 3,
        updateTime: 1_767_225_600_000,
        createdAt: Date.parse("2026-01-01T00:00:00Z"),
        tag: "k",
      },
      { id: "b", state: "running", rawState: "running", createdAt: 1_767_225_600_000 },
    ]);
    expect(parseListPage('{"data":[],"nextCursor":null}').nextCursor).toBeNull();
  });

  it.each([
    ["not JSON", "{", /JSON/],
    ["no data", '{"nextCursor":null}', /data/],
    ["data not a list", '{"data":{},"nextCursor":null}', /data/],
    ["no nextCursor", '{"data":[]}', /nextCursor/],
    ["empty nextCursor", '{"data":[],"nextCursor":""}', /nextCursor/],
    ["an item without jobId", '{"data":[{"state":"x","createdAt":1}],"nextCursor":null}', /data\[0\]\.jobId/],
    ["an item without state", '{"data":[{"jobId":"a","createdAt":1}],"nextCursor":null}', /data\[0\]\.state/],
    ["an item without createdAt", '{"data":[{"jobId":"a","state":"x"}],"nextCursor":null}', /createdAt/],
    [
      "a createdAt that is no time",
      '{"data":[{"jobId":"a","state":"x","createdAt":"soon"}],"nextCursor":null}',
      /createdAt/,
    ],
  ])("refuses %s", (_what, text, message) => {
    expect(() => parseListPage(text)).toThrow(message);
  });
});
