// Every way Finality cuts a URL before showing or logging it, in one place, named by what it keeps:
//
// - `redactToOrigin`: scheme, host and port only. Effect URLs often carry their credential in the
//   path or query (Slack-style `/services/T…/B…/secret`, `?token=…`): in `last_error`, the API,
//   the dashboard, the CLI and the logs they appear this way.
// - `redactCredentials`: the whole URL but its user, password and key-like query values. A poll
//   URL's path names the job (`/status/{id}`), which the operator needs to see; its credentials
//   travel in headers or in those parts.
//
// Pure: every layer uses it.

/** Any `scheme://…` run in a text, up to whitespace or a quote. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;
/** What follows the authority: path, query and fragment. */
const AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;
/** Shorter pieces are left alone (they would match ordinary words or a lone `/`). */
const MIN_SECRET_LENGTH = 4;

/** The URL as it may be shown: `https://hooks.example.com:8443`, without user, path or query. */
export function redactToOrigin(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return "[url]";
  }
}

/**
 * `text` with every URL in it cut to scheme, host and port, and the path, query and user of each
 * `known` URL removed wherever they appear on their own (an error message may quote only the
 * path, or the URL as the parser normalised it).
 */
export function redactUrlsIn(text: string, known: readonly string[] = []): string {
  let out = text;
  for (const url of known) {
    for (const whole of wholeForms(url)) out = out.split(whole).join(redactToOrigin(url));
    for (const piece of secretPieces(url)) out = out.split(piece).join("[redacted]");
  }
  return out.replace(URL_IN_TEXT, (match) => redactToOrigin(match));
}

/** Query parameters whose values are credentials more often than not. */
const SECRET_PARAM = /key|token|secret|sig|password|auth|credential/i;

/** The URL with its path, without user, password or key-like query values: `https://***:***@h/status/1?token=***`. */
export function redactCredentials(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return "(invalid URL)";
  }
  if (parsed.username) parsed.username = "***";
  if (parsed.password) parsed.password = "***";
  for (const name of [...parsed.searchParams.keys()])
    if (SECRET_PARAM.test(name)) parsed.searchParams.set(name, "***");
  return parsed.toString();
}

function wholeForms(url: string): string[] {
  const forms = [url];
  try {
    forms.push(new URL(url).href);
  } catch {
    // Not a URL: only its raw form can appear.
  }
  return forms.filter((form) => form.length >= MIN_SECRET_LENGTH);
}

function secretPieces(url: string): string[] {
  const pieces = [url.replace(AUTHORITY, "")];
  try {
    const parsed = new URL(url);
    pieces.push(
      parsed.pathname + parsed.search + parsed.hash,
      parsed.pathname,
      parsed.search,
      parsed.hash,
      parsed.username,
      parsed.password,
      safeDecode(parsed.pathname + parsed.search),
    );
    // A message may quote one path segment or one query value on its own (a Slack token is one).
    for (const segment of parsed.pathname.split("/")) pieces.push(segment, safeDecode(segment));
    for (const value of parsed.searchParams.values()) pieces.push(value);
  } catch {
    // Not a URL: the raw tail is all there is.
  }
  // Longest first, so a piece is not half-replaced by a shorter one inside it.
  return [...new Set(pieces)]
    .filter((piece) => piece.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
