/**
 * How long a pruned job's tombstone must be kept: the rule the config check enforces and the
 * retention pass falls back on (engine/retention.ts), in one place.
 *
 * A settled job can come back into the ledger after retention deleted it, in these ways, each
 * bounded by a time counted from when it settled:
 * - a sender's redelivery: senders retry for at most `retention.deliveriesDays` (the window the
 *   delivery ids are kept for, which the config already holds to cover them), and a redelivery's
 *   signed timestamp is accepted `providers.<name>.webhook.toleranceSeconds` more;
 * - a discovery sweep: it lists what was created in the last `discover.lookbackHours`, and a job
 *   is created before it settles;
 * - a replay of a webhook without a signed timestamp (`hmac-sha256`): at any time. No window
 *   covers it: the tombstone is what answers it, for as long as it is kept.
 * The reconciler polls only jobs the ledger holds open, never a pruned one, and adds nothing.
 *
 * The job itself is kept `settledJobsDays` (longer when its effects are late), and a tombstone is
 * kept from when the job settled: kept only as long as the job, both go in the same pass and
 * the tombstone guards nothing. So a tombstone must outlive its job by the longest of the windows
 * above: `tombstonesDays >= settledJobsDays + longest`.
 */

const DAY_SECONDS = 86_400;

/** One way a pruned job can come back: how long after it settled, and the keys that say so. */
interface ComeBackWindow {
  days: number;
  /** The configuration keys that set the window, as a user writes them. */
  keys: string[];
}

/** What the rule reads of a configuration (the parsed config has it). */
interface TombstoneConfig {
  retention: { deliveriesDays: number; settledJobsDays: number; tombstonesDays: number };
  providers: Record<
    string,
    {
      webhook?: { toleranceSeconds?: number | undefined } | undefined;
      discover?: { enabled: boolean; lookbackHours: number } | undefined;
    }
  >;
}

/** Every way a pruned job can come back under this configuration, longest first. */
export function comeBackWindows(config: TombstoneConfig): ComeBackWindow[] {
  const { deliveriesDays } = config.retention;
  const windows: ComeBackWindow[] = [{ days: deliveriesDays, keys: ["retention.deliveriesDays"] }];
  for (const [name, provider] of Object.entries(config.providers)) {
    const tolerance = provider.webhook?.toleranceSeconds;
    if (tolerance !== undefined)
      windows.push({
        days: deliveriesDays + tolerance / DAY_SECONDS,
        keys: ["retention.deliveriesDays", `providers.${name}.webhook.toleranceSeconds`],
      });
    if (provider.discover?.enabled)
      windows.push({
        days: provider.discover.lookbackHours / 24,
        keys: [`providers.${name}.discover.lookbackHours`],
      });
  }
  return windows.sort((a, b) => b.days - a.days);
}

/** The longest way back, in days after settlement (the retention pass's `comeBackDays`). */
export function longestComeBackDays(config: TombstoneConfig): number {
  return comeBackWindows(config)[0]?.days ?? 0;
}

/**
 * The config check's message when `tombstonesDays` is too short for its job's ways back, naming
 * every key involved; null when it is long enough.
 */
export function tombstoneTooShort(config: TombstoneConfig): string | null {
  const { settledJobsDays, tombstonesDays } = config.retention;
  const longest = comeBackWindows(config)[0];
  if (longest === undefined) return null;
  const needed = settledJobsDays + longest.days;
  if (tombstonesDays >= needed) return null;
  return (
    `retention.tombstonesDays (${tombstonesDays}) must be at least retention.settledJobsDays (${settledJobsDays}) + ` +
    `${longest.keys.join(" + ")} (${round(longest.days)} days) = ${round(needed)}: a pruned job's tombstone must ` +
    "outlive it by every window in which the job can come back (a redelivery, a discovery sweep), " +
    "or a late webhook or a sweep brings the job back and fires its effects again"
  );
}

const round = (days: number) => Math.round(days * 1000) / 1000;
