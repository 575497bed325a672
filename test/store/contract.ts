import { describe } from "vitest";
import { describeAfterCommit } from "./contract/after-commit.js";
import { describeClaims } from "./contract/claims.js";
import { type OpenStore, useStoreFixture } from "./contract/harness.js";
import { describeHousekeeping } from "./contract/housekeeping.js";
import { describeIntents } from "./contract/intents.js";
import { describeJobWrites } from "./contract/job-writes.js";
import { describeLifecycle } from "./contract/lifecycle.js";
import { describeOverviewReads } from "./contract/overview-reads.js";
import { describeQueries } from "./contract/queries.js";
import { describeRuns } from "./contract/runs.js";
import { describeSettlements } from "./contract/settlements.js";
import { describeStats } from "./contract/stats.js";
import { describeTransactions } from "./contract/transactions.js";

export type { OpenStore, StoreContractContext, StoreFixture } from "./contract/harness.js";

/**
 * The Store port's contract: every adapter runs it (hono's `runTest({ newRouter })` pattern).
 * `open` gives each test a fresh, empty, migrated database; the suite speaks only the port, so
 * it holds no SQL of any dialect.
 */
export function runStoreContract(name: string, open: OpenStore): void {
  describe(`Store contract: ${name}`, () => {
    const scope = useStoreFixture(open);
    describeTransactions(scope);
    describeAfterCommit(scope);
    describeJobWrites(scope);
    describeQueries(scope);
    describeClaims(scope);
    describeOverviewReads(scope);
    describeHousekeeping(scope);
    describeStats(scope);
    describeLifecycle(scope);
    describeIntents(scope);
    describeRuns(scope);
    describeSettlements(scope);
  });
}
