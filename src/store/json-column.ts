import { FinalityError } from "../core/errors.js";

/** JSON values travel as text in SQL columns; null and undefined both become SQL NULL. */
export function toJsonColumn(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export function fromJsonColumn(text: unknown): unknown {
  return typeof text === "string" ? JSON.parse(text) : null;
}

/** Keyset cursors are opaque to callers: base64url of the last row number seen. */
export function encodeCursor(rowNo: number): string {
  // Digits only, so btoa (in every runtime, unlike Buffer) encodes them as they are.
  return btoa(String(rowNo)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
}

/**
 * The row number a cursor holds; null for no cursor (the first page). A cursor this server did
 * not give is refused (400): answering the first page instead would look like a real next page.
 */
export function decodeCursor(cursor: string | undefined): number | null {
  if (!cursor) return null;
  let text = "";
  try {
    text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    // not base64: refused below
  }
  const value = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw new FinalityError("invalid-request", "cursor: not a cursor this server gave (use nextCursor)", {
    details: { field: "cursor" },
  });
}

export function clampLimit(limit: number | undefined, fallback = 50, max = 500): number {
  if (limit === undefined || !Number.isFinite(limit)) return fallback;
  return Math.min(Math.max(1, Math.trunc(limit)), max);
}
