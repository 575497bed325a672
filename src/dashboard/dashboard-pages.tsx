import type { Context, Hono } from "hono";
import { BUILT_IN_PROVIDER } from "../config/parse-config.js";
import { RUNS_PROVIDER } from "../core/run-model.js";
import { engineOf } from "../engine/finality-engine.js";
import type { AppEnv } from "../http/app-env.js";
import { Flash } from "./components.js";
import { ConfigPage } from "./config-page.js";
import { createDashboardAuth, type DashboardAuth } from "./dashboard-auth.js";
import { dashboardForms } from "./dashboard-forms.js";
import { storeReads } from "./dashboard-reads.js";
import type { DashboardHandler, DashboardOptions, DashboardRoute } from "./dashboard-route-table.js";
import { EffectsPage, parseEffectStatus, retryFlash } from "./effects-page.js";
import { setupOf } from "./first-steps.js";
import { IntentsPage, loadIntents } from "./intents-page.js";
import { JobPage, loadJobStory } from "./job-page.js";
import { JobsFilters, JobsList, parseJobsFilter } from "./jobs-page.js";
import { type PageOptions, renderPage } from "./layout.js";
import { FRAGMENT_HEADER } from "./live-refresh.js";
import { OverviewPage } from "./overview-page.js";
import { MissingJobNote, ParkedPage } from "./parked-page.js";
import { loadRuns, parseRunStatus, RunsFilters, RunsPage } from "./runs-page.js";
import { deliveredNotice, TestWebhookForms, type TestWebhookNotice } from "./test-webhook-form.js";

const DEFAULT_REFRESH_MS = 5000;

/**
 * The dashboard's handlers, one for each of its routes (DASHBOARD_ROUTES, which dashboard-routes.ts
 * adds to `app` and imports this module for on the first request): server-rendered pages over the
 * same ledger as the API, behind the same token. Reads only through bounded, indexed store queries
 * (see store/overview-reads.ts), so every view costs the same with a thousand jobs or a million.
 */
export function dashboardHandlers(
  app: Hono<AppEnv>,
  options: DashboardOptions,
): Record<DashboardRoute, DashboardHandler> {
  const { finality, config } = options;
  const { store, clock } = engineOf(finality);
  const local = storeReads(store);
  const readsOf = (c: Context<AppEnv>) => options.reads?.(c.req.raw) ?? local;
  const auth = createDashboardAuth(config.server.apiToken);
  const providers = [...Object.keys(config.providers), ...(options.runs ? [RUNS_PROVIDER] : [])];
  const now = () => clock.now();
  const setup = setupOf(config, BUILT_IN_PROVIDER);

  /** A GET page behind the sign-in: a browser without a session goes to the login form. */
  const page =
    (handler: (c: Context<AppEnv>) => Promise<Response>): DashboardHandler =>
    async (c) => {
      if (!(await auth.signedIn(c))) return refuse(c, auth);
      return handler(c);
    };
  const shell = (c: Context<AppEnv>): Pick<PageOptions, "signOut" | "refreshMs"> => ({
    signOut: auth.required,
    refreshMs: refreshMsOf(c.req.query("refresh")),
  });

  const renderConfig = (c: Context<AppEnv>, notice: TestWebhookNotice | null, status: 200 | 400) =>
    renderPage(c, {
      ...shell(c),
      title: "Configuration",
      section: "config",
      status,
      live: <ConfigPage config={config} activity={options.activity ?? null} now={now()} />,
      footer: <TestWebhookForms providers={config.providers} notice={notice} />,
    });

  return {
    "GET /": page(async (c) => {
      const flash = retryFlash(c.req.query());
      return renderPage(c, {
        ...shell(c),
        title: "Overview",
        section: "overview",
        header: <Flash message={flash?.message ?? null} error={flash?.error} />,
        live: (
          <OverviewPage
            data={await readsOf(c).overview(now(), providers)}
            setup={{ setup, origin: new URL(c.req.url).origin }}
          />
        ),
      });
    }),

    "GET /jobs": page(async (c) => {
      const reads = readsOf(c);
      const { filter, problems } = parseJobsFilter(c.req.query(), reads.cursorMaxLength);
      const jobs = await reads.jobs(filter, providers);
      return renderPage(c, {
        ...shell(c),
        title: "Jobs",
        section: "jobs",
        header: <JobsFilters filter={filter} providers={providers} problems={problems} />,
        live: <JobsList filter={filter} page={jobs} now={now()} />,
      });
    }),

    "GET /jobs/:provider/:rest{.+}": page(async (c) => {
      c.set("route", "/jobs/:provider/:id");
      const key = jobKeyOf(c);
      const after = Number(c.req.query("after") ?? 0);
      const story =
        key && (await loadJobStory(store, key, Number.isSafeInteger(after) && after > 0 ? after : 0));
      if (!key || !story) {
        const what = key ? `${key.provider} / ${key.id}` : "this address";
        const parked = key ? (await store.listParked({ ...key, limit: 100 })).items.reverse() : [];
        const tombstone = key ? await store.getTombstone(key) : null;
        return renderPage(c, {
          ...shell(c),
          refreshMs: null,
          title: "Job not found",
          section: "jobs",
          status: 404,
          live: (
            <>
              <h1>No job {what}</h1>
              <MissingJobNote parked={parked} tombstone={tombstone} now={now()} />
              <p>
                <a href="/jobs">Search the jobs</a>
              </p>
            </>
          ),
        });
      }
      const flash = retryFlash(c.req.query());
      c.var.log.provider = key.provider;
      c.var.log.jobId = key.id;
      return renderPage(c, {
        ...shell(c),
        title: `${key.provider}/${key.id}`,
        section: "jobs",
        header: <Flash message={flash?.message ?? null} error={flash?.error} />,
        live: <JobPage story={story} now={now()} after={after} />,
      });
    }),

    "GET /effects": page(async (c) => {
      const status = parseEffectStatus(c.req.query("status"));
      const view = await readsOf(c).effects(status, status === null ? undefined : c.req.query("cursor"));
      const flash = retryFlash(c.req.query());
      const url = new URL(c.req.url);
      return renderPage(c, {
        ...shell(c),
        title: "Effects",
        section: "effects",
        header: <Flash message={flash?.message ?? null} error={flash?.error} />,
        live: <EffectsPage view={view} now={now()} back={url.pathname + url.search} />,
      });
    }),

    "GET /runs": page(async (c) => {
      const query = {
        status: parseRunStatus(c.req.query("status")),
        kind: c.req.query("kind")?.trim() || undefined,
        cursor: c.req.query("cursor") || undefined,
      };
      return renderPage(c, {
        ...shell(c),
        title: "Runs",
        section: "runs",
        header: <RunsFilters status={query.status} kind={query.kind} />,
        live: <RunsPage view={await loadRuns(store, query, now())} now={now()} />,
      });
    }),

    "GET /parked": page(async (c) => {
      const provider = c.req.query("provider")?.trim() || undefined;
      const cursor = c.req.query("cursor") || undefined;
      return renderPage(c, {
        ...shell(c),
        title: "Parked",
        section: "parked",
        live: (
          <ParkedPage page={await readsOf(c).parked({ provider, cursor })} now={now()} provider={provider} />
        ),
      });
    }),
    "GET /intents": page(async (c) =>
      renderPage(c, {
        ...shell(c),
        title: "Intents",
        section: "intents",
        live: <IntentsPage {...(await loadIntents(store))} now={now()} />,
      }),
    ),
    "GET /config": page(async (c) => renderConfig(c, deliveredNotice(c.req.query(), config.providers), 200)),
    ...dashboardForms(app, {
      finality,
      auth,
      providers: config.providers,
      renderConfig: async (c, notice, status) => renderConfig(c, notice, status),
    }),
  };
}

/** No session: the page asks for the login form; the refresh script gets a 401 and reloads. */
function refuse(c: Context<AppEnv>, auth: DashboardAuth): Response {
  if (!auth.required) throw new Error("unreachable: signed out without a login");
  if (c.req.header(FRAGMENT_HEADER) === "1") return c.text("sign in again", 401);
  const url = new URL(c.req.url);
  return c.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
}

/**
 * The job's key from the raw path: the router decodes `%2F` to `/`, and an id may hold `/`, so
 * the path is split before decoding (as the API does).
 */
function jobKeyOf(c: Context): { provider: string; id: string } | null {
  const rest = new URL(c.req.url).pathname.slice("/jobs/".length);
  const slash = rest.indexOf("/");
  try {
    const provider = decodeURIComponent(rest.slice(0, slash));
    const id = decodeURIComponent(rest.slice(slash + 1));
    return provider && id ? { provider, id } : null;
  } catch {
    return null;
  }
}

/** `?refresh=` seconds between refreshes (0: off); 5 s by default. */
function refreshMsOf(value: string | undefined): number | null {
  if (value === undefined) return DEFAULT_REFRESH_MS;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0) return DEFAULT_REFRESH_MS;
  return seconds === 0 ? null : Math.min(Math.max(seconds, 1), 300) * 1000;
}
