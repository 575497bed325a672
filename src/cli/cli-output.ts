/**
 * How the CLI writes: plain text for people, `--json` for programs, and colours and progress
 * bars only when a person is watching — stdout is a terminal and NO_COLOR is not set
 * (https://no-color.org). Piped into a file or another program, the output is plain.
 */

export interface Style {
  readonly colour: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  /** A job, effect or run status in its colour: green done, red failed, yellow waiting, ... */
  status(text: string): string;
}

interface Stream {
  isTTY?: boolean;
  write(text: string): unknown;
}

export function isInteractive(
  stream: Stream = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return stream.isTTY === true && env.TERM !== "dumb";
}

export function styleFor(stream: Stream = process.stdout, env: NodeJS.ProcessEnv = process.env): Style {
  const colour = isInteractive(stream, env) && (env.NO_COLOR === undefined || env.NO_COLOR === "");
  const paint = (code: number) => (text: string) => (colour ? `\u001b[${code}m${text}\u001b[0m` : text);
  const red = paint(31);
  const green = paint(32);
  const yellow = paint(33);
  const blue = paint(34);
  return {
    colour,
    bold: paint(1),
    dim: paint(2),
    red,
    green,
    yellow,
    blue,
    status(text) {
      if (["succeeded", "delivered", "applied"].includes(text)) return green(text);
      if (["failed", "lost", "dead", "conflicting-terminal"].includes(text)) return red(text);
      // `stale` (the same state again) is routine, not a warning.
      if (["pending", "queued", "delivering", "dispatching", "lower-rank"].includes(text))
        return yellow(text);
      if (text === "running") return blue(text);
      return text;
    },
  };
}

/** Prints a value as JSON (2-space indented, one document, newline at the end). */
export function printJson(value: unknown, stream: Stream = process.stdout): void {
  stream.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Column-aligned rows under a header; `paint` colours a cell after its width is measured. */
export function printTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  options: { style: Style; paint?: (column: number, cell: string) => string; stream?: Stream },
): void {
  const stream = options.stream ?? process.stdout;
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? "").length)),
  );
  const line = (cells: readonly string[], paint: (column: number, cell: string) => string) =>
    cells
      .map((cell, i) => {
        const padded = i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0);
        return paint(i, padded);
      })
      .join("  ")
      .trimEnd();
  stream.write(`${line(headers, (_i, cell) => options.style.bold(cell))}\n`);
  for (const row of rows) stream.write(`${line(row, options.paint ?? ((_i, cell) => cell))}\n`);
}

/** `key  value` lines, keys aligned. */
export function printFacts(
  facts: readonly [string, string][],
  style: Style,
  stream: Stream = process.stdout,
): void {
  const width = Math.max(...facts.map(([key]) => key.length));
  for (const [key, value] of facts) stream.write(`${style.dim(key.padEnd(width))}  ${value}\n`);
}

interface ProgressBar {
  update(done: number): void;
  /** Clears the bar; the caller prints its summary after. */
  finish(): void;
}

/** A one-line bar redrawn in place (a counter when `total` is 0: unknown); off a terminal it draws nothing. */
export function progressBar(
  label: string,
  total: number,
  stream: Stream = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): ProgressBar {
  if (!isInteractive(stream, env)) return { update() {}, finish() {} };
  const width = 30;
  let shown = -1;
  const draw = (done: number) => {
    // An unknown total (0): a counter instead of a bar.
    if (total <= 0) return void stream.write(`\r${label} ${done}`);
    const of = Math.max(total, done);
    const filled = of === 0 ? width : Math.round((done / of) * width);
    stream.write(`\r${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${of}`);
  };
  draw(0);
  return {
    update(done) {
      if (done === shown) return;
      shown = done;
      draw(done);
    },
    finish() {
      stream.write("\r\u001b[2K");
    },
  };
}

/** An ISO time, or "—". */
export function isoOrDash(ms: number | null): string {
  return ms === null ? "—" : new Date(ms).toISOString();
}
