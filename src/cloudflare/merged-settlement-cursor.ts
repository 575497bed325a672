import { FinalityError } from "../core/errors.js";
import { decodeCursor, encodeCursor } from "../store/json-column.js";
import { SINGLE_LEDGER_NAME } from "./shard-layout.js";

/**
 * The settlement feed's cursor on a sharded Worker: the last settlement number taken from each
 * ledger object. Text: `m1.` (the format's version) and the base64url of `key=n` pairs joined by
 * commas, where the key of `ledger-<i>-of-<N>` is `<i>.<N>` and that of `ledger` (the runs home,
 * and the single ledger of a deployment that was never sharded) is `L`; a shard at 0 (nothing
 * taken yet) is left out, and `|` and an FNV-1a checksum of the pairs end the text, so that a
 * cursor cut short or mistyped is refused rather than read as another position. Opaque to
 * consumers: only its round trip is the contract.
 *
 * A cursor of the unsharded feed (a plain row cursor of the object `ledger`) is read as that
 * object's position, so a consumer keeps its place across a reshard from one shard to several.
 */
export type ShardPositions = Map<string, number>;

const VERSION = "m1.";
const SHARD_KEY = /^(0|[1-9][0-9]{0,4})\.([2-9]|[1-9][0-9]{1,4})$/;

function keyOf(name: string): string {
  if (name === SINGLE_LEDGER_NAME) return "L";
  const match = /^ledger-([0-9]+)-of-([0-9]+)$/.exec(name);
  if (match === null) throw new Error(`not a ledger shard name: ${name}`);
  return `${match[1]}.${match[2]}`;
}

function nameOf(key: string): string | null {
  if (key === "L") return SINGLE_LEDGER_NAME;
  const match = SHARD_KEY.exec(key);
  if (match === null || Number(match[1]) >= Number(match[2])) return null;
  return `ledger-${match[1]}-of-${match[2]}`;
}

export function encodeMergedCursor(positions: ShardPositions): string {
  const pairs = [...positions]
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, n]) => `${keyOf(name)}=${n}`);
  const text = pairs.join(",");
  return (
    VERSION +
    btoa(`${text}|${checksum(text)}`)
      .replace(/=+$/, "")
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
  );
}

/**
 * Each shard's position in `cursor` (empty for none: the start). Positions of shards this Worker
 * does not read are kept too, and given back in every cursor derived from this one: during a
 * deploy a consumer may alternate between Workers of two layouts, and neither may lose the other's
 * place. A cursor that is not one of these is refused with a 400 naming `field`.
 */
export function decodeMergedCursor(cursor: string | undefined | null, field: string): ShardPositions {
  const positions: ShardPositions = new Map();
  if (cursor === undefined || cursor === null || cursor === "") return positions;
  const refuse = () =>
    new FinalityError("invalid-request", `${field}: not a settlement cursor this server gave`, {
      details: { field },
    });
  if (!cursor.startsWith(VERSION)) {
    // The unsharded feed's cursor: a position in the object `ledger`.
    try {
      positions.set(SINGLE_LEDGER_NAME, decodeCursor(cursor) ?? 0);
      return positions;
    } catch {
      throw refuse();
    }
  }
  const body = cursor.slice(VERSION.length);
  if (!/^[A-Za-z0-9_-]*$/.test(body) || body.length > 4096) throw refuse();
  let text: string;
  try {
    text = atob(body.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    throw refuse();
  }
  const bar = text.lastIndexOf("|");
  const pairs = text.slice(0, bar);
  if (bar < 0 || text.slice(bar + 1) !== checksum(pairs)) throw refuse();
  if (pairs === "") return positions;
  for (const pair of pairs.split(",")) {
    const match = /^([^=]+)=([1-9][0-9]{0,15})$/.exec(pair);
    const name = match ? nameOf(match[1] as string) : null;
    const n = match ? Number(match[2]) : Number.NaN;
    if (name === null || !Number.isSafeInteger(n) || positions.has(name)) throw refuse();
    positions.set(name, n);
  }
  return positions;
}

/** FNV-1a (32 bit) of `text` (ASCII here), in hex: catches a damaged cursor, not a forged one. */
function checksum(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16);
}

/** The cursor to hand a shard for "after position `n`" (undefined: from its start). */
export const shardCursorAt = (n: number): string | undefined => (n > 0 ? encodeCursor(n) : undefined);
