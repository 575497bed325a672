import type { Context } from "hono";
import { FinalityError } from "../core/errors.js";
import type { AppEnv } from "./app-env.js";
import { bearerTokenOf } from "./bearer-auth.js";
import { constantTimeEqual } from "./constant-time-equal.js";

/** A pool of workers sharing one bearer token, allowed to claim and report some kinds. */
export interface WorkerPool {
  name: string;
  /** Kinds its workers may claim and touch; null for every kind. */
  kinds: readonly string[] | null;
}

/** Maps a bearer token to its pool, or null when no pool has it. */
export type WorkerAuthorizer = (token: string) => WorkerPool | null;

interface WorkerPoolConfig {
  token: string;
  kinds?: readonly string[] | undefined;
}

/**
 * The authorizer for configured pools. Every pool's token is compared (in constant time) on
 * every call, so the answer's timing does not tell which pools exist. With no pools at all,
 * `allowAnonymous` lets any caller in as pool `default` for every kind: only for a server bound
 * to loopback without an API token, like the rest of /v1.
 */
export function createWorkerAuthorizer(
  pools: Readonly<Record<string, WorkerPoolConfig>>,
  options: { allowAnonymous?: boolean } = {},
): WorkerAuthorizer {
  const entries = Object.entries(pools).map(([name, pool]) => ({
    token: pool.token,
    pool: { name, kinds: pool.kinds && pool.kinds.length > 0 ? [...pool.kinds] : null },
  }));
  const anonymous: WorkerPool | null =
    entries.length === 0 && options.allowAnonymous ? { name: "default", kinds: null } : null;
  return (token) => {
    let found: WorkerPool | null = null;
    for (const entry of entries)
      if (constantTimeEqual(token, entry.token) && found === null) found = entry.pool;
    return found ?? anonymous;
  };
}

/** The caller's pool from `Authorization: Bearer <token>`; 401 when none matches. */
export function workerPoolOf(c: Context<AppEnv>, authorize: WorkerAuthorizer): WorkerPool {
  const token = bearerTokenOf(c.req.header("authorization"));
  const pool = authorize(token);
  if (pool === null) throw new FinalityError("unauthorized", "a valid worker pool token is required");
  c.var.log.workerPool = pool.name;
  return pool;
}
