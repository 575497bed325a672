import type { Context, Hono } from "hono";
import type { ProviderConfig } from "../config/config-schema.js";
import { FinalityError, isFinalityError } from "../core/errors.js";
import { retryEffect } from "../engine/effect-admin.js";
import type { Finality } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import type { AppEnv } from "../http/app-env.js";
import { readBody } from "../http/read-body.js";
import { signTestWebhook } from "../providers/test-webhook.js";
import { type DashboardAuth, localPath } from "./dashboard-auth.js";
import type { DashboardHandler, DashboardRoute } from "./dashboard-route-table.js";
import { renderLogin } from "./layout.js";
import {
  deliveredLocation,
  parseTestWebhookForm,
  TEST_WEBHOOK_PATH,
  type TestWebhookNotice,
} from "./test-webhook-form.js";

/** Forms are a token, an id and a path, or a test webhook's small result: anything larger is not ours. */
const FORM_LIMIT_BYTES = 16 * 1024;

type FormRoute =
  | "GET /login"
  | "POST /login"
  | "POST /logout"
  | "POST /effects/:id/retry"
  | `POST ${typeof TEST_WEBHOOK_PATH}`;

/**
 * The dashboard's form posts: sign in, sign out, retry an effect, send a test webhook. Each
 * answers with a redirect, or with its page again when the input is refused.
 * A post from another site or origin, or (without a token) under a host name that is not
 * loopback, never reaches them: createApp's cross-site guard (http/cross-site-guard.ts) refuses
 * it first, as on every route but the webhooks and the health checks.
 */
export function dashboardForms(
  /** The app, for the test webhook: it goes through the app's own webhook route. */
  app: Hono<AppEnv>,
  options: {
    finality: Finality;
    auth: DashboardAuth;
    providers: Readonly<Record<string, ProviderConfig>>;
    /** The configuration page with a test webhook's notice, at `status`. */
    renderConfig: (c: Context<AppEnv>, notice: TestWebhookNotice, status: 200 | 400) => Promise<Response>;
  },
): Pick<Record<DashboardRoute, DashboardHandler>, FormRoute> {
  const { finality, auth, providers } = options;
  return {
    "GET /login": async (c) => {
      const next = localPath(c.req.query("next"));
      if (!auth.required || (await auth.signedIn(c))) return c.redirect(next, 303);
      return renderLogin(c, { next, error: null, status: 200 });
    },

    "POST /login": async (c) => {
      const form = await readForm(c);
      const next = localPath(form.get("next"));
      if (!auth.required) return c.redirect(next, 303);
      const token = form.get("token") ?? "";
      if (token === "" || !auth.accepts(token)) {
        c.var.log.outcome = "login-refused";
        const error =
          token === ""
            ? "Enter the API token."
            : "That token is not correct. Use the service's API token (server.apiToken or FINALITY_API_TOKEN).";
        return renderLogin(c, { next, error, status: 401 });
      }
      await auth.startSession(c);
      return c.redirect(next, 303);
    },

    "POST /logout": async (c) => {
      auth.endSession(c);
      return c.redirect(auth.required ? "/login" : "/", 303);
    },

    "POST /effects/:id/retry": async (c) => {
      if (!(await auth.signedIn(c)))
        throw new FinalityError("unauthorized", "sign in to the dashboard first");
      const form = await readForm(c);
      const back = localPath(form.get("back"));
      const id = c.req.param("id") as string; // the route's `:id`: always there
      try {
        // Wakes this process's dispatcher once committed (retryEffect's afterCommit).
        await retryEffect(finality, id);
        return c.redirect(withFlash(back, "retried", id), 303);
      } catch (error) {
        if (isFinalityError(error, "not-found") || isFinalityError(error, "conflict"))
          return c.redirect(withFlash(back, "retry-error", error.code), 303);
        throw error;
      }
    },

    [`POST ${TEST_WEBHOOK_PATH}` as const]: async (c) => {
      if (!(await auth.signedIn(c)))
        throw new FinalityError("unauthorized", "sign in to the dashboard first");
      const request = parseTestWebhookForm(await readForm(c), providers);
      if ("refused" in request) {
        c.var.log.outcome = "test-webhook-refused";
        return options.renderConfig(c, request, 400);
      }
      const signed = await signTestWebhook(request.provider, request.config, {
        jobId: request.jobId,
        state: request.state,
        now: engineOf(finality).clock.now(),
        ...(request.result === undefined ? {} : { result: request.result }),
      });
      // Through the app's own webhook route, as a sender's request: the same verify → ingest,
      // counted and logged as a webhook (and shown as the provider's last one).
      const response = await app.request(signed.path, {
        method: "POST",
        headers: signed.headers,
        body: signed.body,
      });
      const answer = (await response.json().catch(() => ({}))) as {
        outcome?: string;
        code?: string;
        detail?: string;
      };
      if (response.status === 200 && typeof answer.outcome === "string")
        return c.redirect(deliveredLocation(request.provider, answer.outcome, request.jobId), 303);
      const notice: TestWebhookNotice = {
        provider: request.provider,
        status: response.status,
        outcome: answer.code ?? "error",
        jobId: request.jobId,
        ...(answer.detail === undefined ? {} : { detail: answer.detail }),
      };
      return options.renderConfig(c, notice, 200);
    },
  };
}

async function readForm(c: Context): Promise<URLSearchParams> {
  const bytes = await readBody(c.req.raw, FORM_LIMIT_BYTES);
  return new URLSearchParams(new TextDecoder().decode(bytes));
}

/** `back` with one flash parameter, replacing any earlier flash. */
function withFlash(back: string, name: "retried" | "retry-error", value: string): string {
  const url = new URL(back, "http://dashboard.invalid");
  url.searchParams.delete("retried");
  url.searchParams.delete("retry-error");
  url.searchParams.set(name, value);
  return url.pathname + url.search;
}
