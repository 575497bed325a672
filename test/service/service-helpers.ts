import { writeFileSync } from "node:fs";
import { type Service, startService } from "../http/helpers/service.js";
import { SECRET } from "../http/helpers/webhooks.js";

export { SECRET };

/** Writes `config` as a JSON file in `dir` and starts `finality serve` on `db` with it. */
export function serveWith(
  dir: { file(name: string): string },
  db: string | undefined,
  config: unknown,
  name = "config.json",
  env?: Record<string, string>,
): Promise<Service> {
  const file = dir.file(name);
  writeFileSync(file, JSON.stringify(config));
  return startService({ ...(db ? { db } : {}), ...(env ? { env } : {}), args: ["--config", file] });
}

export async function api<T = Record<string, unknown>>(
  url: string,
  init?: RequestInit,
): Promise<{ status: number; body: T }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

export async function registerJob(base: string, provider: string, id: string): Promise<void> {
  const { status } = await api(`${base}/v1/jobs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ provider, id }),
  });
  if (status !== 201 && status !== 200) throw new Error(`register ${id}: ${status}`);
}

/** Every job of a provider through the API's cursor paging. */
export async function allJobs(base: string, provider: string): Promise<Record<string, unknown>[]> {
  const jobs: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `provider=${provider}&limit=500${cursor ? `&cursor=${cursor}` : ""}`;
    const { body } = await api<{ items: Record<string, unknown>[]; nextCursor: string | null }>(
      `${base}/v1/jobs?${query}`,
    );
    jobs.push(...body.items);
    cursor = body.nextCursor;
  } while (cursor);
  return jobs;
}
