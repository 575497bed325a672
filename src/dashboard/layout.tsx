import type { Context } from "hono";
import { html, raw } from "hono/html";
import type { Child } from "hono/jsx";
import { DASHBOARD_CSS } from "./dashboard-style.js";
import { FRAGMENT_HEADER, LIVE_REFRESH_SCRIPT } from "./live-refresh.js";
import { TABLE_LABELS_SCRIPT } from "./table-labels.js";

type Section = "overview" | "jobs" | "effects" | "runs" | "parked" | "intents" | "config";

const SECTIONS: [Section, string, string][] = [
  ["overview", "/", "Overview"],
  ["jobs", "/jobs", "Jobs"],
  ["effects", "/effects", "Effects"],
  ["runs", "/runs", "Runs"],
  ["parked", "/parked", "Parked"],
  ["intents", "/intents", "Intents"],
  ["config", "/config", "Config"],
];

export interface PageOptions {
  title: string;
  section: Section | null;
  /** A sign-out button (only when the dashboard has a login). */
  signOut: boolean;
  /** Auto-refresh period of the live part; null: none. */
  refreshMs: number | null;
  /** Above the live part, never replaced by a refresh (filters, forms). */
  header?: Child;
  /** The live part: what a refresh replaces. */
  live: Child;
  /** Below the live part, never replaced by a refresh (forms). */
  footer?: Child;
  status?: 200 | 400 | 401 | 404 | 409;
}

/**
 * Answers with the whole page, or with its live part alone when the auto-refresh script asks
 * (fragment header), so both always come from the same rendering.
 */
export function renderPage(c: Context, page: PageOptions): Response | Promise<Response> {
  c.header("cache-control", "no-store");
  c.header("vary", FRAGMENT_HEADER);
  const status = page.status ?? 200;
  if (c.req.header(FRAGMENT_HEADER) === "1") {
    // biome-ignore lint/complexity/noUselessFragments: the live part may be a list or text; the fragment renders it as one element
    return c.html(<>{page.live}</>, status);
  }
  return c.html(html`<!DOCTYPE html>${<Layout {...page} />}`, status);
}

/** What a browser gets for a path that is no page: the dashboard's frame, not JSON. */
export function renderNotFoundPage(c: Context): Response | Promise<Response> {
  return renderPage(c, {
    title: "Not found",
    section: null,
    signOut: false,
    refreshMs: null,
    status: 404,
    live: (
      <section class="panel" id="not-found">
        <h1>Not found</h1>
        <p>
          There is no page at <code>{c.req.path}</code>. The dashboard has <a href="/">Overview</a>,{" "}
          <a href="/jobs">Jobs</a>, <a href="/effects">Effects</a> and <a href="/runs">Runs</a>; the JSON API
          is under <code>/v1</code>.
        </p>
      </section>
    ),
  });
}

/** A refusal (a bad cursor in a hand-edited URL, …) shown to a browser as a page of the dashboard. */
export function renderRefusalPage(c: Context, status: 400 | 413, title: string, detail: string) {
  c.header("cache-control", "no-store");
  return c.html(
    html`<!DOCTYPE html>${(
      <Layout
        title={title}
        section={null}
        signOut={false}
        refreshMs={null}
        live={
          <section class="panel" id="refused">
            <h1>{title}</h1>
            <p>{detail}</p>
            <p>
              <a href={c.req.path}>Start again</a> without the query.
            </p>
          </section>
        }
      />
    )}`,
    status,
  );
}

function Layout(page: PageOptions) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${page.title} · Finality`}</title>
        <link rel="icon" href="data:," />
        <style>{raw(DASHBOARD_CSS)}</style>
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/">
            Finality
          </a>
          <nav>
            {SECTIONS.map(([section, href, label]) => (
              <a href={href} class={section === page.section ? "active" : undefined}>
                {label}
              </a>
            ))}
          </nav>
          <div class="right">
            <a href="/docs/api" id="api-reference">
              API reference
            </a>
            {page.refreshMs !== null && (
              <label title="Refresh the numbers below without reloading the page">
                <input type="checkbox" id="auto-refresh" checked /> live{" "}
                <span id="refreshed-at" class="mono" />
              </label>
            )}
            {page.signOut && (
              <form method="post" action="/logout">
                <button type="submit">Sign out</button>
              </form>
            )}
          </div>
        </header>
        <main>
          {page.header}
          <div id="live" data-refresh-ms={page.refreshMs ?? undefined}>
            {page.live}
          </div>
          {page.footer}
        </main>
        <script>{raw(TABLE_LABELS_SCRIPT)}</script>
        {page.refreshMs !== null && <script>{raw(LIVE_REFRESH_SCRIPT)}</script>}
      </body>
    </html>
  );
}

/** The login page: the only page shown without a session. */
export function renderLogin(
  c: Context,
  options: { next: string; error: string | null; status: 200 | 401 },
): Response | Promise<Response> {
  c.header("cache-control", "no-store");
  const page = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Sign in · Finality</title>
        <link rel="icon" href="data:," />
        <style>{raw(DASHBOARD_CSS)}</style>
      </head>
      <body>
        <div class="login">
          <h1>Finality</h1>
          <p class="muted">This dashboard is protected by the service's API token.</p>
          {options.error !== null && (
            <div class="flash error" role="alert" id="login-error">
              {options.error}
            </div>
          )}
          <form method="post" action="/login">
            <input type="hidden" name="next" value={options.next} />
            <label>
              API token
              <input type="password" name="token" id="token" autocomplete="current-password" required />
            </label>
            <button type="submit">Sign in</button>
          </form>
        </div>
      </body>
    </html>
  );
  return c.html(html`<!DOCTYPE html>${page}`, options.status);
}
