import type { JobLister } from "../discovery-types.js";
import { fromRfc3339, objectOf, textOf } from "../json-fields.js";
import { fetchQueryPaged, readListedJobs } from "../list-page.js";
import { type ListPage, sweepLister } from "../list-sweep.js";
import type { StatusClient } from "../status-client.js";

const PAGE_SIZE = 100;

/**
 * Batch inference jobs, `GET /model-invocation-jobs?maxResults=&sortBy=CreationTime&sortOrder=Descending&nextToken=`
 * (ListModelInvocationJobs: `{invocationJobSummaries, nextToken}`, newest first as asked).
 * The tag is the job's `clientRequestToken`: the one field of a listed job its submitter chooses
 * that can hold an intent key (a job name cannot hold `=`); the SDKs fill it with a UUID when the
 * submitter does not, which matches no intent.
 */
export function createBedrockLister(client: StatusClient): JobLister {
  return sweepLister(
    ["model_invocation_job"],
    "Bedrock model invocation jobs list",
    fetchQueryPaged(client, {
      path: "/model-invocation-jobs",
      query: { maxResults: String(PAGE_SIZE), sortBy: "CreationTime", sortOrder: "Descending" },
      cursorParam: "nextToken",
    }),
    readInvocationJobSummaries,
  );
}

function readInvocationJobSummaries(body: unknown): ListPage | string {
  const list = objectOf(body);
  const items = list.invocationJobSummaries ?? [];
  if (!Array.isArray(items)) return "`invocationJobSummaries` is not an array";
  const jobs = readListedJobs(items, "model_invocation_job", "jobArn or submitTime", (job) => ({
    id: textOf(job.jobArn),
    createdAt: fromRfc3339(job.submitTime),
    tag: textOf(job.clientRequestToken),
  }));
  if (typeof jobs === "string") return jobs;
  return { jobs, next: textOf(list.nextToken) ?? null };
}
