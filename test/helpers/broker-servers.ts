import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { type Service, ServiceMissing } from "./services.js";

// Private broker servers for one test file: a nats-server with JetStream or a redis-server on a
// free port, so a test can SIGKILL and restart it without disturbing other files (or agents).
// Ready means the server said so on its log, not a delay.

export interface BrokerServer {
  readonly port: number;
  readonly url: string;
  /** Kills the process (SIGKILL by default) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data directory; resolves once it is ready. */
  start(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function managed(
  service: Service,
  command: string,
  args: (port: number) => string[],
  ready: RegExp,
  scheme: string,
) {
  return async (options: { port?: number; start?: boolean } = {}): Promise<BrokerServer> => {
    const port = options.port ?? (await freePort());
    let child: ChildProcess | null = null;
    const server: BrokerServer = {
      port,
      url: `${scheme}://127.0.0.1:${port}`,
      async start() {
        const started = spawn(command, args(port), { stdio: ["ignore", "pipe", "pipe"] });
        child = started;
        await new Promise<void>((resolve, reject) => {
          let log = "";
          const onData = (chunk: Buffer) => {
            log += chunk.toString();
            if (ready.test(log)) resolve();
          };
          started.stdout?.on("data", onData);
          started.stderr?.on("data", onData);
          // A missing binary fails the test with the service named, not a bare ENOENT.
          started.once("error", (error: NodeJS.ErrnoException) =>
            reject(error.code === "ENOENT" ? new ServiceMissing(service, `${command} is missing`) : error),
          );
          started.once("exit", (code) =>
            reject(new Error(`${command} exited (${code}) before ready:\n${log}`)),
          );
        });
      },
      async kill(signal = "SIGKILL") {
        const running = child;
        child = null;
        if (!running || running.exitCode !== null || running.signalCode !== null) return;
        const exited = new Promise((resolve) => running.once("exit", resolve));
        running.kill(signal);
        await exited;
      },
    };
    if (options.start !== false) await server.start();
    return server;
  };
}

/** nats-server -js with its store in `storeDir` (kept across restarts, so the stream survives). */
export function startNatsServer(storeDir: string, options?: { start?: boolean }): Promise<BrokerServer> {
  return managed(
    "NATS",
    "/usr/sbin/nats-server",
    (port) => ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir],
    /Server is ready/,
    "nats",
  )(options);
}

/**
 * redis-server without RDB snapshots. With `dataDir`, an fsync-always append-only file keeps the
 * stream across a SIGKILL (without one a restart starts empty and there is nothing to count).
 */
export function startRedisServer(dataDir?: string): Promise<BrokerServer> {
  const persistence = dataDir
    ? ["--appendonly", "yes", "--appendfsync", "always", "--dir", dataDir]
    : ["--appendonly", "no"];
  return managed(
    "Redis",
    "redis-server",
    (port) => ["--port", String(port), "--bind", "127.0.0.1", "--save", "", ...persistence],
    /Ready to accept connections/,
    "redis",
  )();
}
