import type { BoundedCount } from "../store/overview-reads.js";

const numberFormat = new Intl.NumberFormat("en-US");

/** 1234 → "1,234". */
export function formatNumber(n: number): string {
  return numberFormat.format(n);
}

/** A bounded count as shown: "1,234", or "10,000+" when the cap was reached. */
export function formatCount(count: BoundedCount): string {
  return `${formatNumber(count.count)}${count.capped ? "+" : ""}`;
}

/** "2026-01-01 12:00:05 UTC"; "—" for none. */
export function formatTime(ms: number | null): string {
  if (ms === null) return "—";
  return `${new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d{3}Z$/, "")} UTC`;
}

/** A duration in the largest sensible unit: "45 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 90) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** "12 min ago" / "in 30 s" relative to `now`; "—" for none. */
export function formatRelative(ms: number | null, now: number): string {
  if (ms === null) return "—";
  return ms <= now ? `${formatDuration(now - ms)} ago` : `in ${formatDuration(ms - now)}`;
}

/** JSON for display, cut to `max` characters. */
export function formatJson(value: unknown, max = 2000): string {
  if (value === null || value === undefined) return "—";
  const text = JSON.stringify(value, null, 2) ?? String(value);
  return text.length > max
    ? `${text.slice(0, max)}\n… (${formatNumber(text.length - max)} more characters)`
    : text;
}

/** A percentage with no decimals; "—" when there is nothing to divide. */
export function formatShare(part: number, total: number): string {
  return total === 0 ? "—" : `${Math.round((part / total) * 100)} %`;
}

/** The dashboard address of a job: the id is one encoded segment even when it holds `/`. */
export function jobHref(provider: string, id: string): string {
  return `/jobs/${encodeURIComponent(provider)}/${encodeURIComponent(id)}`;
}

/** A query string from the defined, non-empty values. */
export function queryString(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text === "" ? "" : `?${text}`;
}
