import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "../../src/store/json-column.js";
import { jobsPage, keysetPage, keysetStatement } from "../../src/store/keyset-page.js";

describe("the store's one keyset page", () => {
  it("numbers PostgreSQL's parameters in order and leaves SQLite's as ?, skipping filters not set", () => {
    const query = { provider: "acme", stuck: true, open: true, cursor: encodeCursor(40), limit: 10 };
    const pg = keysetStatement(jobsPage(query, "postgres"), "postgres");
    expect(pg.text).toBe(
      "SELECT * FROM jobs WHERE provider = $1 AND stuck AND state NOT IN ('succeeded', 'failed', 'cancelled', 'expired', 'lost') AND job_no < $2 ORDER BY job_no DESC LIMIT $3",
    );
    expect(pg.values).toEqual(["acme", 40, 11]);
    const lite = keysetStatement(jobsPage({ state: "running", stuck: false }, "sqlite"), "sqlite");
    expect(lite.text).toBe("SELECT * FROM jobs WHERE state = ? AND stuck = 0 ORDER BY job_no DESC LIMIT ?");
    expect(lite.values).toEqual(["running", 51]);
    expect(lite.limit).toBe(50);
  });

  it("gives a next cursor only when a row beyond the page was read, and it is the page's last row number", () => {
    const rows = [{ no: 9 }, { no: 7 }, { no: 4 }];
    const full = keysetPage(
      rows,
      2,
      (row) => row.no,
      (row) => row.no,
    );
    expect(full.items).toEqual([9, 7]);
    expect(decodeCursor(full.nextCursor ?? undefined)).toBe(7);
    expect(
      keysetPage(
        rows,
        3,
        (row) => row.no,
        (row) => row.no,
      ).nextCursor,
    ).toBeNull();
  });
});
