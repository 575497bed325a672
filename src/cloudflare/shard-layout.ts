import type { JobKey } from "../core/model.js";

/**
 * Where jobs live on Workers: `count` ledger Durable Objects, a job on the one its key hashes to.
 * A layout is named by its count, and every object name carries it, so that two layouts never
 * share an object: changing the count never moves a job silently into an object that another
 * layout reads as its own (see docs/cloudflare-workers.md, "Resharding").
 */
interface ShardLayout {
  readonly count: number;
  /** Object names, index = shard number. */
  readonly names: readonly string[];
}

export interface ShardLayouts {
  current: ShardLayout;
  /** The layout being drained (cloudflare.previousShards), or null. */
  previous: ShardLayout | null;
}

/**
 * The single ledger object's name before sharding existed; one shard keeps it, so an existing
 * deployment's data stays where it is (its name is part of its identity: never change it).
 */
export const SINGLE_LEDGER_NAME = "ledger";

export function shardLayout(count: number): ShardLayout {
  const names = Array.from({ length: count }, (_, i) =>
    count === 1 ? SINGLE_LEDGER_NAME : `ledger-${i}-of-${count}`,
  );
  return { count, names };
}

export function shardLayouts(cloudflare: {
  shards: number;
  previousShards?: number | undefined;
}): ShardLayouts {
  const previous = cloudflare.previousShards;
  return {
    current: shardLayout(cloudflare.shards),
    // The same count twice is no change at all: nothing to drain.
    previous: previous === undefined || previous === cloudflare.shards ? null : shardLayout(previous),
  };
}

const encoder = new TextEncoder();

/**
 * The shard of a job: FNV-1a (32 bit) over the UTF-8 bytes of provider, a NUL, and id, modulo the
 * count. Stable across isolates, deploys and runtimes (no seed, no Math.random, no host hash),
 * which is the whole point: the same key must find the same object forever under one layout.
 */
export function shardIndexOf(key: JobKey, count: number): number {
  if (count === 1) return 0;
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(`${key.provider}\u0000${key.id}`)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % count;
}

export function shardNameOf(key: JobKey, layout: ShardLayout): string {
  return layout.names[shardIndexOf(key, layout.count)] as string;
}
