import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { eventually } from "../browser/helpers/ledger.js";
import { CLI } from "../http/helpers/service.js";
import { sseReader } from "../settlements/sse-client.js";

describe("finality demo", () => {
  it("serves the dashboard, lets the reconciler settle what webhooks missed, and stops cleanly on Ctrl-C", async () => {
    // The flaky provider is down from 1 s to 4 s: what it settles then is only caught by polling.
    const child = spawn(
      process.execPath,
      [CLI, "demo", "--port", "0", "--rate", "4", "--down-after", "1", "--down-for", "3", "--for", "6"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (data: Buffer) => {
      stderr += data.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const lines: string[] = [];
    const started = new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout }).on("line", (line) => {
        lines.push(line);
        if (line.includes("Press Ctrl-C")) resolve();
      });
      void exited.then(() => reject(new Error(`demo exited early: ${stderr}`)));
    });
    await started;
    const url = /dashboard\s+(http:\/\/\S+?)\/?$/.exec(lines.find((l) => l.includes("dashboard")) ?? "")?.[1];
    const db = /ledger\s+(\S+)/.exec(lines.find((l) => l.includes("ledger")) ?? "")?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(db && existsSync(db)).toBe(true);

    const overview = await fetch(`${url}/`);
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain("Overview");

    const settledBy = async () => {
      const page = (await (await fetch(`${url}/v1/jobs?limit=500`)).json()) as {
        items: { settledBy: string | null }[];
      };
      return new Set(page.items.map((job) => job.settledBy));
    };
    // Which comes first depends on the random timelines and the machine's load: await both.
    await eventually(
      async () => {
        const seen = await settledBy();
        return seen.has("reconcile") && seen.has("webhook");
      },
      "jobs settle both through a webhook and through reconcile",
      45_000,
    );

    // The settlement stream it points at gives the demo's settlements as they commit.
    expect(lines.find((l) => l.includes("stream"))).toContain(`curl -N ${url}/v1/settlements/stream`);
    const stream = await fetch(`${url}/v1/settlements/stream`);
    if (!stream.body) throw new Error("no stream body");
    const events = sseReader(stream.body);
    expect(JSON.parse((await events.next())?.data ?? "{}")).toMatchObject({ provider: expect.any(String) });
    await events.cancel();

    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(lines.at(-1)).toBe("demo stopped");
    expect(existsSync(db as string)).toBe(false);
  }, 90_000);
});
