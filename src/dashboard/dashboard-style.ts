/** The dashboard's whole stylesheet, inlined in each page: no asset route, no build step. */
export const DASHBOARD_CSS = `
:root { --fg: #1d2330; --muted: #5f6b7a; --line: #dde2ea; --bg: #f5f7fa; --card: #fff; --accent: #2f5fd0;
  --ok: #1f8a4c; --warn: #b7791f; --bad: #c53030; --info: #2b6cb0; font-size: 14px; }
* { box-sizing: border-box; }
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 24px; padding: 10px 24px; background: #1d2330; color: #fff; }
header.top .brand { font-weight: 700; letter-spacing: .02em; color: #fff; }
header.top nav { display: flex; flex-wrap: wrap; gap: 4px 16px; }
header.top nav a { color: #c9d3e3; padding: 4px 0; }
header.top nav a.active { color: #fff; border-bottom: 2px solid #7aa2ff; }
header.top .right { margin-left: auto; display: flex; align-items: center; gap: 12px; color: #c9d3e3; font-size: 12px; }
header.top .right button { background: none; border: 1px solid #56607a; color: #c9d3e3; border-radius: 4px; padding: 2px 8px; cursor: pointer; }
main { padding: 20px 24px 40px; max-width: 1400px; }
h1 { font-size: 20px; margin: 0 0 16px; } h1 .mono { font-size: 18px; } h2 { font-size: 15px; margin: 24px 0 8px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card .label { color: var(--muted); font-size: 12px; } .card .value { font-size: 24px; font-weight: 600; margin-top: 4px; }
.card.alert .value { color: var(--bad); } .card a.value { display: block; color: inherit; }
/* min(): on a screen narrower than two columns, one column the screen's width, never wider. */
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(520px, 100%), 1fr)); gap: 16px; }
.grid2 > * { min-width: 0; }
.panel { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin-top: 12px; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; font-size: 13px; }
th { color: var(--muted); font-weight: 600; font-size: 12px; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
/* Job ids and idempotency keys have no spaces; they break anywhere rather than widen the page.
   Not every cell: "anywhere" also lets a table squeeze short words ("notif/y") to fit. */
.mono, code, h1, dd, td a, td .small { overflow-wrap: anywhere; }
pre { background: #f0f3f8; padding: 8px; border-radius: 6px; overflow-x: auto; max-height: 260px; margin: 0; }
/* Commands to copy wrap rather than hide their end behind a scroll bar on a phone. */
#first-steps pre { white-space: pre-wrap; overflow-wrap: anywhere; }
header.top .right a { color: #c9d3e3; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; background: #e8ecf2; color: #3b4454; white-space: nowrap; }
.badge.pending { background: #eef1f6; color: #4a5568; } .badge.running { background: #e3ecff; color: #2446a8; }
.badge.succeeded, .badge.delivered, .badge.applied { background: #e0f4e8; color: var(--ok); }
.badge.failed, .badge.lost, .badge.dead, .badge.conflicting-terminal { background: #fde5e5; color: var(--bad); }
.badge.cancelled, .badge.expired, .badge.released { background: #f2e9dc; color: #8a5a12; }
.badge.duplicate, .badge.duplicate-delivery, .badge.stale, .badge.retry { background: #e6eef8; color: var(--info); }
.badge.lower-rank, .badge.delivering, .badge.queued, .badge.dispatching { background: #fdf3dc; color: var(--warn); }
.badge.stuck, .badge.flag { background: #fde5e5; color: var(--bad); }
.badge.src-webhook { background: #e3ecff; color: #2446a8; } .badge.src-reconcile { background: #fdebdc; color: #9c4a0f; }
.badge.src-worker { background: #e0f4e8; color: var(--ok); } .badge.src-lease { background: #efe5fb; color: #6b3fb3; }
tr.ignored td { color: var(--muted); }
form.filters { margin-bottom: 14px; display: flex; flex-wrap: wrap; gap: 10px; align-items: end; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px; }
form.filters label, form.filters .field { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 4px; }
input, select { font: inherit; padding: 5px 8px; border: 1px solid #c5ccd8; border-radius: 5px; background: #fff; }
button { white-space: nowrap; font: inherit; padding: 5px 12px; border-radius: 5px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
.pager { display: flex; gap: 16px; margin-top: 12px; align-items: center; color: var(--muted); }
.flash { padding: 10px 14px; border-radius: 6px; margin-bottom: 14px; background: #e0f4e8; color: #185c35; border: 1px solid #b7e1c7; }
.flash.error { background: #fde5e5; color: #8b1f1f; border-color: #f2b8b8; }
.muted { color: var(--muted); } .small { font-size: 12px; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 16px; margin: 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.share { display: flex; height: 14px; border-radius: 7px; overflow: hidden; background: #e8ecf2; margin: 8px 0; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; font-size: 12px; color: var(--muted); margin-top: 6px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
svg.chart { width: 100%; height: auto; display: block; }
.login { max-width: 380px; margin: 80px auto; background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 24px; }
.login form { display: flex; flex-direction: column; gap: 12px; } .login input { width: 100%; }
/* Narrow screens (a phone in portrait): tables become one card per row, each cell labelled with
   its column's heading (data-label, set by the layout's script); the header wraps. */
@media (max-width: 720px) {
  header.top { padding: 8px 12px; gap: 6px 16px; }
  header.top .right { margin-left: 0; }
  main { padding: 12px 10px 32px; }
  .panel { padding: 10px; }
  table, tbody, tr, td { display: block; width: 100%; }
  thead { display: none; }
  tr { border: 1px solid var(--line); border-radius: 6px; margin-bottom: 8px; padding: 4px 0; background: var(--card); }
  td { border: 0; padding: 3px 10px; position: relative; }
  td.num { text-align: left; }
  td, td * { overflow-wrap: anywhere; }
  td[data-label] { padding-left: 120px; }
  td[data-label]::before { content: attr(data-label); position: absolute; left: 10px; width: 104px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; color: var(--muted); font-size: 12px; font-family: system-ui, sans-serif; }
  td:empty { display: none; }
  dl.facts { grid-template-columns: minmax(0, 1fr); } dl.facts dd { margin-bottom: 6px; }
  form.filters > * { flex: 1 1 140px; } form.filters input, form.filters select { width: 100%; }
  pre { max-width: 100%; }
  .cards { grid-template-columns: repeat(auto-fill, minmax(110px, 1fr)); }
}
`;
