import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const DIST = fileURLToPath(new URL("../../dist/runs/run-service.js", import.meta.url));

export interface Proc {
  /** Resolves with the next stdout line that satisfies `match` (earlier lines are kept for later calls). */
  line(match: (line: string) => boolean): Promise<string>;
  send(line: string): void;
  signal(signal: NodeJS.Signals): void;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/** Runs one of this folder's .mjs scripts as a child process and reads it line by line. */
export function startScript(script: string, args: readonly string[]): Proc {
  if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run \`npm run build\` first`);
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [`${HERE}${script}`, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (data: Buffer) => {
    stderr += data.toString();
  });
  const seen: string[] = [];
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    const index = waiters.findIndex((w) => w.match(line));
    if (index >= 0) waiters.splice(index, 1)[0]?.resolve(line);
    else seen.push(line);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    line(match) {
      const index = seen.findIndex(match);
      if (index >= 0) return Promise.resolve(seen.splice(index, 1)[0] as string);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void exited.then((exit) =>
          reject(new Error(`${script} exited (${exit.code ?? exit.signal}) first; stderr: ${stderr}`)),
        );
      });
    },
    send(line) {
      child.stdin.write(`${line}\n`);
    },
    signal(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    exited,
    stderr: () => stderr,
  };
}

/**
 * Waits until `probe` returns a value other than undefined, looking again every few
 * milliseconds; fails after `timeoutMs` with the last value seen. For conditions another
 * process makes true (a sweep, a delivery), never as a fixed sleep.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A tiny JSON client for the service under test. */
export function client(baseUrl: string) {
  async function call(method: string, path: string, body?: unknown) {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      contentType: response.headers.get("content-type"),
      // biome-ignore lint/suspicious/noExplicitAny: test code reads arbitrary JSON answers.
      body: (text ? JSON.parse(text) : null) as any,
    };
  }
  return {
    call,
    enqueue: (body: Record<string, unknown>) => call("POST", "/v1/runs", body),
    run: async (id: string) => (await call("GET", `/v1/runs/${id}`)).body,
    events: async (id: string) => (await call("GET", `/v1/runs/${id}/events`)).body.items as unknown[],
    cancel: (id: string) => call("POST", `/v1/runs/${id}/cancel`),
    event: (attemptId: string, body: Record<string, unknown>) =>
      call("POST", `/v1/attempts/${attemptId}/events`, body),
    heartbeat: (attemptId: string, generation: number) =>
      call("POST", `/v1/attempts/${attemptId}/heartbeat`, { generation }),
    claim: (workerId: string, body: Record<string, unknown>) =>
      call("POST", `/v1/workers/${workerId}/claim`, body),
  };
}

/** Starts the test server on `file`; resolves with its base URL and the process. */
export async function startServer(file: string, options: Record<string, unknown> = {}) {
  const server = startScript("run-server.mjs", [file, JSON.stringify(options)]);
  const line = await server.line((l) => l.startsWith("listening "));
  return { server, url: line.slice("listening ".length) };
}
