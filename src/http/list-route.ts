import type { Hono } from "hono";
import type { z } from "zod";
import { parseWith } from "../core/validation.js";
import type { Page } from "../store/store.js";
import type { AppEnv } from "./app-env.js";

/**
 * A paged GET list route: the query string validated by `schema` (a 400 `invalid-request`
 * otherwise), one page read, and the answer `{ items, nextCursor }` with each item in its JSON form.
 */
export function addListRoute<S extends z.ZodType, T, J>(
  app: Hono<AppEnv>,
  path: string,
  schema: S,
  list: (query: z.output<S>) => Promise<Page<T>>,
  toJson: (item: T) => J,
): void {
  app.get(path, async (c) => {
    c.set("route", path);
    const query = parseWith(schema, c.req.query(), "invalid-request");
    const page = await list(query);
    return c.json({ items: page.items.map((item) => toJson(item)), nextCursor: page.nextCursor });
  });
}
