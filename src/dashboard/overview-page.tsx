import type { Job } from "../core/model.js";
import { type SeriesKey, StackedBars, totalsByKey } from "./charts.js";
import { CountCard, JobTable } from "./components.js";
import { EffectTable } from "./effect-table.js";
import { FirstSteps, type Setup, UnsignedWarning } from "./first-steps.js";
import { formatCount, formatShare, queryString } from "./format.js";
import type { OverviewData } from "./overview-data.js";
import { LatencyPanel } from "./overview-latency.js";

const SETTLED_BY: SeriesKey[] = [
  { key: "webhook", label: "webhook", colour: "#3b6fe0" },
  { key: "reconcile", label: "reconcile", colour: "#e07b2c" },
  { key: "worker", label: "worker", colour: "#2f9e62" },
  { key: "lease", label: "lease expiry", colour: "#8a5cd0" },
  { key: "api", label: "api", colour: "#718096" },
  { key: "intent", label: "intent", colour: "#c2a23a" },
  { key: "discovery", label: "discovery", colour: "#2aa5b8" },
];

const WEBHOOK_OUTCOMES: SeriesKey[] = [
  { key: "applied", label: "applied", colour: "#2f9e62" },
  { key: "duplicate-delivery", label: "duplicate delivery", colour: "#7aa2ff" },
  { key: "duplicate", label: "duplicate", colour: "#b7c9f5" },
  { key: "stale", label: "repeat", colour: "#c3d3ee" },
  { key: "lower-rank", label: "lower rank", colour: "#e07b2c" },
  { key: "conflicting-terminal", label: "conflicting terminal", colour: "#d64545" },
  { key: "parked", label: "parked (not registered yet)", colour: "#8a5cd0" },
  { key: "already-settled-pruned", label: "settled, pruned", colour: "#718096" },
];

/** The live part of the overview: counts, charts, and what needs attention. */
export function OverviewPage(props: { data: OverviewData; setup?: { setup: Setup; origin: string } }) {
  const d = props.data;
  const empty = d.states.every(({ count }) => count.count === 0);
  const settledTotals = totalsByKey(d.settlements, SETTLED_BY);
  const settledAll = [...settledTotals.values()].reduce((a, b) => a + b, 0);
  return (
    <>
      <h1>Overview</h1>
      {props.setup && <UnsignedWarning setup={props.setup.setup} />}
      {props.setup && empty && <FirstSteps setup={props.setup.setup} origin={props.setup.origin} />}
      <div class="cards">
        <CountCard name="open" label="open jobs" count={d.open} href="/jobs?open=true" />
        <CountCard name="due" label="due for a poll now" count={d.due} />
        <CountCard name="stuck" label="stuck" count={d.stuck} href="/jobs?stuck=true" alert />
        <CountCard
          name="conflict"
          label="conflicting terminal"
          count={d.conflict}
          href="/jobs?flag=conflict"
          alert
        />
        <CountCard name="anomaly" label="provider 404" count={d.anomaly} href="/jobs?flag=anomaly" alert />
        <CountCard
          name="effects-dead"
          label="dead effects"
          count={d.effects.dead}
          href="/effects?status=dead"
          alert
        />
        <CountCard
          name="effects-pending"
          label="pending effects"
          count={d.effects.pending}
          href="/effects?status=pending"
        />
      </div>

      <h2>Jobs by state</h2>
      <div class="cards">
        {d.states.map(({ state, count }) => (
          <CountCard
            name={`state-${state}`}
            label={state}
            count={count}
            href={`/jobs${queryString({ state })}`}
          />
        ))}
      </div>

      <div class="grid2">
        <section class="panel">
          <h2>Settlements, last hour</h2>
          <ShareBar totals={settledTotals} total={settledAll} />
          <StackedBars
            name="settlements"
            title="Jobs settled per minute, by what settled them"
            series={d.settlements}
            window={d.window}
            keys={SETTLED_BY}
          />
        </section>
        <section class="panel">
          <h2>Webhook deliveries, last hour</h2>
          <p class="small muted">
            Signed webhooks by outcome. Duplicates and stale ones are answered 200 and recorded, never
            applied.
          </p>
          <StackedBars
            name="webhooks"
            title="Webhook observations per minute, by outcome"
            series={d.webhooks}
            window={d.window}
            keys={WEBHOOK_OUTCOMES}
          />
        </section>
      </div>

      <LatencyPanel latency={d.latency} now={d.now} />

      <div class="grid2">
        <section class="panel">
          <h2>Open jobs by age</h2>
          <table>
            <tbody>
              {d.ages.map((age) => (
                <tr data-age={age.label}>
                  <td>{age.label}</td>
                  <td class="num">{formatCount(age.count)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Oldest open</h2>
          <JobTable jobs={d.oldestOpen} now={d.now} empty="No open jobs." compact />
        </section>
        <section class="panel">
          <h2>Needs attention</h2>
          <JobTable
            jobs={dedupe([...d.stuckJobs, ...d.conflictJobs, ...d.anomalyJobs])}
            now={d.now}
            empty="No stuck, conflicting or missing jobs."
            compact
          />
          <h2>Dead effects</h2>
          <EffectTable effects={d.deadEffects} now={d.now} back="/" empty="No dead effects." compact />
        </section>
      </div>
    </>
  );
}

/** Webhook vs reconcile (and other sources): which path got to each settlement first. */
function ShareBar(props: { totals: Map<string, number>; total: number }) {
  return (
    <div data-share-total={props.total}>
      <div class="share">
        {SETTLED_BY.map((key) => {
          const n = props.totals.get(key.key) ?? 0;
          return n === 0 ? null : (
            <div
              style={`width:${(n / props.total) * 100}%;background:${key.colour}`}
              title={`${key.label}: ${n}`}
            />
          );
        })}
      </div>
      <div class="legend">
        {SETTLED_BY.filter(
          (key) => (props.totals.get(key.key) ?? 0) > 0 || key.key === "webhook" || key.key === "reconcile",
        ).map((key) => (
          <span data-share={key.key}>
            <i style={`background:${key.colour}`} />
            {key.label} {formatShare(props.totals.get(key.key) ?? 0, props.total)}
          </span>
        ))}
      </div>
    </div>
  );
}

function dedupe(jobs: readonly Job[]): Job[] {
  const seen = new Set<string>();
  return jobs.filter((job) => {
    const key = `${job.provider}\u0000${job.id}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
