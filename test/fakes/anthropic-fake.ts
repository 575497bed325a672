import { anthropicWebhookEvent, idleEvent as idleEventFixture } from "./anthropic-fixtures.js";
import { FakeServer, header, type SeenRequest } from "./fake-server.js";
import { limitParam, newestFirst, pageOf } from "./list-pages.js";
import { type SignedDelivery, standardWebhook } from "./webhook-delivery.js";

const SESSIONS_BETA = "managed-agents-2026-04-01";

/**
 * A fake Anthropic API: message batches, Managed Agents sessions and their events list, with the
 * key in `x-api-key` or `Authorization: Bearer` (the 1.x SDK sends the latter), a required
 * `anthropic-version`, the sessions beta header required on `/v1/sessions*`, errors in Anthropic's
 * `{type: "error", error: {type, message}}` shape, and Standard Webhooks deliveries. The lists:
 * `GET /v1/messages/batches` (`limit` 1-1000, default 20, `after_id`/`before_id`; `{data, has_more,
 * first_id, last_id}`, most recent first) and `GET /v1/sessions` (`limit`, `page` an opaque token,
 * `order`, `include_archived`; `{data, next_page, prev_page}`, `created_at` descending by default).
 */
export class AnthropicFake {
  readonly batches = new Map<string, Record<string, unknown>>();
  readonly sessions = new Map<string, Record<string, unknown>>();
  /** Each session's stream events, oldest first (the API's default order). */
  readonly events = new Map<string, Record<string, unknown>[]>();
  readonly server: FakeServer;

  constructor(readonly apiKey = "sk-ant-test-fake") {
    this.server = new FakeServer(
      (request) => this.route(request),
      (request) => this.refusal(request),
      () => anthropicError("not_found_error", "Not found"),
    );
  }

  listen(): Promise<string> {
    return this.server.listen();
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** Sets a session's status and, for an idle one, appends the idle event that ended its turn. */
  setSession(object: Record<string, unknown>, idle?: { reason: string; processedAt?: string }): void {
    const id = String(object.id);
    this.sessions.set(id, object);
    if (idle) {
      const list = this.events.get(id) ?? [];
      list.push(idleEventFixture(idle.reason, idle.processedAt));
      this.events.set(id, list);
    }
  }

  webhook(secret: string, type: string, objectId: string, options: { id?: string } = {}): SignedDelivery {
    return standardWebhook(secret, anthropicWebhookEvent(type, objectId), options);
  }

  /** List calls answered so far, per list (`/v1/messages/batches` or `/v1/sessions`). */
  listCalls(path: "/v1/messages/batches" | "/v1/sessions"): number {
    return this.server.seen.filter((request) => request.path === path).length;
  }

  private route(request: SeenRequest) {
    if (request.method !== "GET") return null;
    if (request.path === "/v1/messages/batches") return this.listBatches(request.query);
    const batch = /^\/v1\/messages\/batches\/([^/]+)$/.exec(request.path);
    if (batch) return found(this.batches.get(decodeURIComponent(batch[1] as string)));
    const session = /^\/v1\/sessions(?:\/([^/]+)(\/events)?)?$/.exec(request.path);
    if (!session) return null;
    if (!(header(request, "anthropic-beta") ?? "").split(",").includes(SESSIONS_BETA))
      return {
        status: 400,
        body: anthropicError("invalid_request_error", `requires anthropic-beta: ${SESSIONS_BETA}`),
      };
    if (session[1] === undefined) return this.listSessions(request.query);
    const id = decodeURIComponent(session[1] as string);
    if (!session[2]) return found(this.sessions.get(id));
    if (!this.sessions.has(id)) return null;
    return { status: 200, body: this.listEvents(id, request.query) };
  }

  private listBatches(query: URLSearchParams) {
    const limit = limitParam(query.get("limit"), 20, 1, 1000);
    if (limit === undefined) return invalid("limit: Input should be between 1 and 1000");
    const batches = newestFirst(this.batches.values(), (batch) => Date.parse(String(batch.created_at)));
    const found = pageOf(batches, (batch) => String(batch.id), limit, {
      afterId: query.get("after_id"),
      beforeId: query.get("before_id"),
    });
    if (found === undefined) return invalid("the cursor does not name a batch");
    return {
      status: 200,
      body: {
        data: found.page,
        has_more: found.hasMore,
        first_id: found.page[0]?.id ?? null,
        last_id: found.page.at(-1)?.id ?? null,
      },
    };
  }

  private listSessions(query: URLSearchParams) {
    const limit = limitParam(query.get("limit"), 20, 1, 1000);
    if (limit === undefined) return invalid("limit: Input should be between 1 and 1000");
    const archived = query.get("include_archived") === "true";
    let sessions = newestFirst(
      [...this.sessions.values()].filter((session) => archived || session.archived_at === null),
      (session) => Date.parse(String(session.created_at)),
    );
    if (query.get("order") === "asc") sessions = sessions.reverse();
    const token = query.get("page");
    const afterId =
      token === null
        ? null
        : Buffer.from(token, "base64url")
            .toString()
            .replace(/^after:/, "");
    const found = pageOf(sessions, (session) => String(session.id), limit, { afterId });
    if (found === undefined) return invalid("page: invalid cursor");
    const last = found.page.at(-1)?.id;
    return {
      status: 200,
      body: {
        data: found.page,
        next_page: found.hasMore && last ? Buffer.from(`after:${String(last)}`).toString("base64url") : null,
        prev_page: token,
      },
    };
  }

  /** `order` (asc|desc), `types[]` filter and `limit`, paged as `{data, next_page}`. */
  private listEvents(id: string, query: URLSearchParams) {
    const types = query.getAll("types[]");
    let events = (this.events.get(id) ?? []).filter(
      (event) => types.length === 0 || types.includes(String(event.type)),
    );
    if (query.get("order") === "desc") events = [...events].reverse();
    const limit = Number(query.get("limit") ?? "20");
    return { data: events.slice(0, limit), next_page: events.length > limit ? "page_2" : null };
  }

  private refusal(request: SeenRequest) {
    const key = header(request, "x-api-key") ?? header(request, "authorization")?.replace(/^Bearer /, "");
    if (key !== this.apiKey)
      return { status: 401, body: anthropicError("authentication_error", "invalid x-api-key") };
    if (!header(request, "anthropic-version"))
      return {
        status: 400,
        body: anthropicError("invalid_request_error", "anthropic-version header is required"),
      };
    return null;
  }
}

function found(object: Record<string, unknown> | undefined) {
  return object === undefined ? null : { status: 200, body: object };
}

function invalid(message: string) {
  return { status: 400, body: anthropicError("invalid_request_error", message) };
}

function anthropicError(type: string, message: string) {
  return { type: "error", error: { type, message }, request_id: "req_011CZkZfake" };
}
