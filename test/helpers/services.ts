import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { connect } from "node:net";

// The machine services some tests need. When one is missing, the test that needs it FAILS with a
// message naming the service and the command that starts it: a skip, or a test that returns early,
// would report a pass (or exit 0) for something never run (issue 33). The check is a TCP connect
// (refused at once on 127.0.0.1) or a look for the binary, so a missing service costs no timeout.

export type Service = "PostgreSQL" | "Redis" | "RabbitMQ" | "NATS" | "Chromium" | "workerd";

/** The command that starts (or installs) each service on the CI image. */
export const START_COMMANDS: Record<Service, string> = {
  PostgreSQL: "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
  Redis:
    'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
  RabbitMQ: "rabbitmq-server -detached",
  NATS: "start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log",
  Chromium: "apt-get install chromium",
  workerd: "npm ci (workerd is Miniflare's runtime, installed with the dev dependencies)",
};

/** Thrown by the checks below; its message is all a reader of the failed test needs. */
export class ServiceMissing extends Error {
  constructor(
    readonly service: Service,
    where: string,
  ) {
    super(`${service} is not available (${where}): start it with \`${START_COMMANDS[service]}\``);
    this.name = "ServiceMissing";
  }
}

/** Whether something accepts a TCP connection at host:port (a refusal answers at once). */
export function tcpAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Fails unless a server of `service` accepts connections at `url` (host and port taken from it). */
export async function requireServer(service: Service, url: string, defaultPort: number): Promise<void> {
  const { hostname, port } = new URL(url);
  const host = hostname.replace(/^\[|\]$/g, "") || "127.0.0.1";
  const at = Number(port || defaultPort);
  if (!(await tcpAnswers(host, at))) throw new ServiceMissing(service, `nothing answers at ${host}:${at}`);
}

/** Fails unless the executable `path` exists (tests that run a private server of their own). */
export function requireBinary(service: Service, path: string): void {
  if (!existsSync(path)) throw new ServiceMissing(service, `${path} is missing`);
}

const require = createRequire(import.meta.url);

/** Fails unless Miniflare's workerd binary (the platform package the workerd package names) is installed. */
export function requireWorkerd(): void {
  let path: string;
  try {
    path = (require("workerd") as { default: string }).default;
  } catch (error) {
    throw new ServiceMissing("workerd", `the workerd package does not load: ${(error as Error).message}`);
  }
  requireBinary("workerd", path);
}
