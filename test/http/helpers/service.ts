import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const CLI = join(ROOT, "dist/cli/main.js");

/** A directory of its own for each test file's databases and config files. */
export function tempDir(): { path: string; file(name: string): string; cleanup(): void } {
  const path = mkdtempSync(join(tmpdir(), "finality-http-"));
  return {
    path,
    file: (name) => join(path, name),
    cleanup: () => rmSync(path, { recursive: true, force: true }),
  };
}

/** The environment without anything of the developer's that would change the service's config. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("FINALITY_") && key !== "DATABASE_URL") env[key] = value;
  }
  return { FINALITY_LOG_LEVEL: "warn", ...env, ...extra };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Service {
  url: string;
  child: ChildProcess;
  exited: Promise<Exit>;
  stdout(): string;
  stderr(): string;
  /** Sends a signal and resolves with how the process ended. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/**
 * Runs `finality serve --port 0` as a real child process and resolves once it prints the line
 * with its URL; rejects with its stderr if it exits first. No timers: only its own output.
 */
export function startService(options: {
  /** SQLite file; omit when the config (or DATABASE_URL) names the store. */
  db?: string;
  env?: Record<string, string>;
  args?: string[];
}): Promise<Service> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--port", "0", ...(options.db ? ["--db", options.db] : []), ...(options.args ?? [])],
    {
      env: cleanEnv(options.env ?? {}),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  const exited = new Promise<Exit>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  child.stderr?.on("data", (data: Buffer) => {
    stderr += data.toString();
  });
  return new Promise<Service>((resolve, reject) => {
    child.stdout?.on("data", (data: Buffer) => {
      stdout += data.toString();
      const match = /finality listening on (\S+)/.exec(stdout);
      if (match?.[1]) {
        const url = match[1];
        resolve({
          url,
          child,
          exited,
          stdout: () => stdout,
          stderr: () => stderr,
          async stop(signal = "SIGTERM") {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    });
    void exited.then((exit) =>
      reject(new Error(`finality serve exited (${exit.code ?? exit.signal}) before listening: ${stderr}`)),
    );
  });
}

/** Runs one CLI command to its end. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<Exit & { stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: cleanEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (data: Buffer) => {
    stdout += data.toString();
  });
  child.stderr.on("data", (data: Buffer) => {
    stderr += data.toString();
  });
  return new Promise((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}
