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

/** "2026-01-01 12:00:05 UTC"; "—" for none; the bare number for one no date can hold. */
export function formatTime(ms: number | null): string {
  if (ms === null) return "—";
  const iso = isoTime(ms);
  return iso === null ? outOfRange(ms) : `${iso.replace("T", " ").replace(/\.\d{3}Z$/, "")} UTC`;
}

/**
 * ISO 8601, or a plain note for a value `Date` cannot hold. Never throws: a database written
 * before timestamps were bounded (core/bounds.ts) may hold any number, and one such value must
 * not make the whole page a 500.
 */
export function formatIsoTime(ms: number): string {
  return isoTime(ms) ?? outOfRange(ms);
}

function isoTime(ms: number): string | null {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function outOfRange(ms: number): string {
  return `${String(ms)} ms (out of range)`;
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
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    // Stored before results were bounded: too deep for JSON.stringify. Shown as a note, not a 500.
    return "(a value too deeply nested to show)";
  }
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
