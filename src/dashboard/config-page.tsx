import type { EffectConfig, FinalityConfig, ProviderConfig } from "../config/config-schema.js";
import { POLL_ONLY_TYPES, webhookConfigOf } from "../config/provider-config-schema.js";
import { Badge } from "./components.js";
import { type Column, DataTable } from "./data-table.js";
import { formatDuration, formatRelative } from "./format.js";
import type { ActivityMark, ProviderActivity } from "./provider-activity.js";

/** Outcomes that mean the webhook or poll did what it should; anything else is shown as a problem. */
const GOOD_OUTCOMES = new Set([
  "applied",
  "duplicate-delivery",
  "duplicate",
  "stale",
  "lower-rank",
  // Kept for a job not registered yet, or answered by a pruned job's tombstone: both as designed.
  "parked",
  "already-settled-pruned",
  "observed",
]);

/**
 * The configuration page: what each provider instance and effect is set up to do, and whether it
 * is working. It says whether a secret, a key or a poll URL is set, never what it is, and shows an
 * effect's destination as scheme://host:port only (a path or query may carry a token).
 */
export function ConfigPage(props: {
  config: FinalityConfig;
  activity: ProviderActivity | null;
  now: number;
}) {
  const { config, activity, now } = props;
  const providers = Object.entries(config.providers);
  return (
    <>
      <h1>Configuration</h1>
      <p class="muted">
        What this process runs with. Secrets, API keys and URLs with credentials are never shown: only whether
        they are set. Every key is described in docs/configuration.md.
      </p>
      <h2>Providers</h2>
      <DataTable
        rows={providers}
        columns={providerColumns(config, activity, now)}
        empty="No provider instances."
        attrs={{ "data-table": "providers" }}
        rowAttrs={([name]) => ({ "data-provider": name })}
      />
      <h2>Effects</h2>
      {config.effects.length === 0 ? (
        <p class="muted">
          No effects: nothing is sent when a job settles. Add one under <code>effects</code> in the
          configuration.
        </p>
      ) : (
        <table data-table="effects">
          <thead>
            <tr>
              <th>effect</th>
              <th>destination</th>
              <th>fires on</th>
              <th>only for</th>
            </tr>
          </thead>
          <tbody>
            {config.effects.map((effect) => (
              <tr data-effect={effect.name}>
                <td class="mono">{effect.name}</td>
                <td class="mono" data-field="destination">
                  {shownDestination(effect)}
                </td>
                <td>{effect.on.join(", ")}</td>
                <td class="small">{scopeOf(effect)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Delivery and workers</h2>
      <dl class="facts">
        <dt>effect delivery</dt>
        <dd>
          {config.effectDelivery.enabled
            ? "on in this process"
            : "off in this process (another replica delivers)"}
          , {config.effectDelivery.concurrency} at once, {config.effectDelivery.timeoutSeconds} s timeout
        </dd>
        <dt>effect retries</dt>
        <dd data-field="effect-retries">
          <EffectRetries delivery={config.effectDelivery} />
        </dd>
        <dt>run attempts</dt>
        <dd data-field="run-attempts">
          {config.workers.maxAttempts} per run, queued again after {config.workers.retryBaseSeconds} s
          doubling up to {config.workers.retryMaxSeconds} s
        </dd>
        <dt>API token</dt>
        <dd>{config.server.apiToken === undefined ? "not set (loopback only)" : "set"}</dd>
        <dt>store</dt>
        <dd>{"sqlite" in config.store ? "SQLite" : "PostgreSQL"}</dd>
        <dt>worker pools</dt>
        <dd>{Object.keys(config.workers.pools).join(", ") || "none"}</dd>
      </dl>
    </>
  );
}

type ProviderRow = [name: string, provider: ProviderConfig];

function providerColumns(
  config: FinalityConfig,
  activity: ProviderActivity | null,
  now: number,
): Column<ProviderRow>[] {
  const last = (head: string, field: string, mark: (name: string) => ActivityMark | undefined) => ({
    head,
    attrs: { "data-field": field },
    cell: ([name]: ProviderRow) => <LastActivity mark={mark(name)} recorded={activity !== null} now={now} />,
  });
  return [
    { head: "provider", class: "mono", cell: ([name]) => name },
    { head: "type", cell: ([, provider]) => provider.type },
    {
      head: "webhook secret",
      attrs: { "data-field": "webhook-secret" },
      cell: ([, provider]) => <WebhookSecret provider={provider} />,
    },
    {
      head: "polling",
      attrs: { "data-field": "poll" },
      cell: ([, provider]) => <Polling provider={provider} />,
    },
    {
      head: "unknown jobs",
      attrs: { "data-field": "unknown-jobs" },
      cell: ([, provider]) => <UnknownJobs policy={provider.unknownJobs} />,
    },
    {
      head: "reconcile",
      class: "small",
      cell: ([, provider]) => <ReconcileSettings config={config} provider={provider} />,
    },
    last("last webhook", "last-webhook", (name) => activity?.lastWebhook(name)),
    last("last poll", "last-poll", (name) => activity?.lastPoll(name)),
  ];
}

function WebhookSecret(props: { provider: ProviderConfig }) {
  const webhook = webhookConfigOf(props.provider) as { secrets?: string[]; jwt?: unknown } | undefined;
  const secrets = webhook?.secrets?.length ?? 0;
  const jwt = webhook?.jwt !== undefined;
  if (secrets === 0 && !jwt)
    return (
      <span data-secret="none">
        <Badge kind="failed">none</Badge> <span class="small">webhooks refused (401)</span>
      </span>
    );
  const parts = [
    secrets > 0 ? `${secrets} secret${secrets === 1 ? "" : "s"}` : null,
    jwt ? "JWT keys" : null,
  ];
  return (
    <span data-secret="set">
      <Badge kind="succeeded">set</Badge> <span class="small">{parts.filter(Boolean).join(" + ")}</span>
    </span>
  );
}

function Polling(props: { provider: ProviderConfig }) {
  const provider = props.provider;
  if (provider.type === "generic") {
    return provider.poll === undefined ? (
      <span data-poll="none">
        <Badge kind="pending">no poll URL</Badge> <span class="small">open jobs only watched for stuck</span>
      </span>
    ) : (
      <span data-poll="set">
        <Badge kind="succeeded">poll URL set</Badge>
      </span>
    );
  }
  if (POLL_ONLY_TYPES.has(provider.type))
    return (
      <span data-poll="set">
        <Badge kind="succeeded">status API</Badge> <span class="small">credentials set; no webhooks</span>
      </span>
    );
  const hasKey = (provider as { apiKey?: string }).apiKey !== undefined;
  return hasKey ? (
    <span data-poll="set">
      <Badge kind="succeeded">status API</Badge> <span class="small">API key set</span>
    </span>
  ) : (
    <span data-poll="none">
      <Badge kind="pending">no API key</Badge> <span class="small">webhooks only</span>
    </span>
  );
}

/** Why a signed webhook answered 200 `parked` never shows up as a job: the policy says so here. */
function UnknownJobs(props: { policy: ProviderConfig["unknownJobs"] }) {
  return props.policy === "adopt" ? (
    <span data-unknown-jobs="adopt">
      adopt <span class="small muted">a webhook for an unregistered job creates it</span>
    </span>
  ) : (
    <span data-unknown-jobs="registered-only">
      registered-only{" "}
      <span class="small muted">a webhook for an unregistered job is parked until it is registered</span>
    </span>
  );
}

function EffectRetries(props: { delivery: FinalityConfig["effectDelivery"] }) {
  const { retrySeconds, maxAgeSeconds, maxAttempts } = props.delivery;
  const delays = retrySeconds.map((seconds) => formatDuration(seconds * 1000)).join(", ");
  const limits = [
    `${formatDuration(maxAgeSeconds * 1000)} old`,
    maxAttempts === undefined ? null : `${maxAttempts} attempts`,
  ].filter(Boolean);
  return (
    <>
      retry after {delays} (the last repeats); dead after {limits.join(" or ")}
    </>
  );
}

function ReconcileSettings(props: { config: FinalityConfig; provider: ProviderConfig }) {
  const r = { ...props.config.reconcile, ...(props.provider.reconcile ?? {}) } as FinalityConfig["reconcile"];
  return (
    <span data-field="reconcile">
      first poll after {r.graceSeconds} s, then {r.minIntervalSeconds}–{r.maxIntervalSeconds} s; stuck after{" "}
      {r.stuckAfterSeconds} s; {r.concurrency} at once
      {r.ratePerSecond !== undefined &&
        `, ${r.ratePerSecond}/s (burst ${r.burst ?? Math.max(1, Math.ceil(r.ratePerSecond))})`}
    </span>
  );
}

function LastActivity(props: { mark: ActivityMark | undefined; recorded: boolean; now: number }) {
  if (!props.recorded) return <span class="muted small">not recorded here</span>;
  if (props.mark === undefined) return <span class="muted">none since start</span>;
  const good = GOOD_OUTCOMES.has(props.mark.outcome);
  return (
    <span data-outcome={props.mark.outcome}>
      <Badge kind={good ? "applied" : "failed"}>{props.mark.outcome}</Badge>{" "}
      <span class="small muted">{formatRelative(props.mark.at, props.now)}</span>
    </span>
  );
}

function scopeOf(effect: EffectConfig): string {
  const parts = [
    effect.providers ? `providers ${effect.providers.join(", ")}` : null,
    effect.kinds ? `kinds ${effect.kinds.join(", ")}` : null,
  ].filter(Boolean);
  return parts.length === 0 ? "every job" : parts.join("; ");
}

/** `https://user:pass@host:8443/hook?token=x` → `https://host:8443`: where it goes, nothing that opens it. */
/** An effect's destination without credentials: the URL's origin, or broker, server and target. */
function shownDestination(effect: EffectConfig): string {
  if (effect.url) return redactedOrigin(effect.url);
  if (effect.nats) return `nats ${effect.nats.servers.map(redactedOrigin).join(",")} ${effect.nats.subject}`;
  if (effect.amqp)
    return `amqp ${redactedOrigin(effect.amqp.url)} ${effect.amqp.exchange}/${effect.amqp.routingKey}`;
  if (effect.redis) return `redis ${redactedOrigin(effect.redis.url)} ${effect.redis.stream}`;
  return "(none)";
}

export function redactedOrigin(url: string): string {
  try {
    const parsed = new URL(url);
    const port =
      parsed.port || (parsed.protocol === "https:" ? "443" : parsed.protocol === "http:" ? "80" : "");
    return `${parsed.protocol}//${parsed.hostname}${port ? `:${port}` : ""}`;
  } catch {
    return "(not a URL)";
  }
}
