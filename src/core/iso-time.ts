/** Epoch milliseconds as the public JSON shapes write a time: ISO-8601 in UTC; null stays null. */
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

/** The last millisecond `YYYY` can write (9999-12-31T23:59:59.999Z): later years need `+YYYYYY`. */
const LAST_FOUR_DIGIT_MS = 253_402_300_799_999;
const DAY_MS = 86_400_000;

/**
 * `new Date(ms).toISOString()`, the same text, for a fraction of its cost: V8 formats it in C++
 * through a date cache and `snprintf` (~7,500 instructions a call, counted by callgrind), and an
 * effect's message writes three. Times from 1970 to 9999 in whole milliseconds (every time the
 * ledger stores) are written here; anything else (earlier, later, fractional, not finite) is
 * left to `Date`, which also throws for what it cannot write.
 */
export function isoTime(ms: number): string {
  if (!(ms >= 0 && ms <= LAST_FOUR_DIGIT_MS) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  // The civil date of a day count (Howard Hinnant's `civil_from_days`): years in 400-year eras
  // from 0000-03-01, so that the leap day falls last in each year of the count.
  const fromMarch = days + 719_468;
  const era = Math.floor(fromMarch / 146_097);
  const dayOfEra = fromMarch - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  return `${year}-${two(month)}-${two(day)}T${two(hours)}:${two(minutes)}:${two(seconds)}.${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
}

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
