import { readFileSync } from "node:fs";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import * as entry from "../../src/cloudflare/index.js";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const wrangler = parse(read("deploy/workers/wrangler.toml")) as {
  main: string;
  durable_objects: { bindings: { name: string; class_name: string }[] };
  migrations: { tag: string; new_sqlite_classes?: string[] }[];
  triggers: { crons: string[] };
  vars: { FINALITY_CONFIG: Record<string, unknown> };
};

/** Every `env:NAME` the configuration refers to. */
function secretNames(value: unknown): string[] {
  if (typeof value === "string") return value.startsWith("env:") ? [value.slice(4)] : [];
  if (Array.isArray(value)) return value.flatMap(secretNames);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(secretNames);
  return [];
}

describe("the Workers deploy template", () => {
  it("binds the ledger class the entry exports, as a SQLite Durable Object, with a cron trigger", () => {
    expect(wrangler.durable_objects.bindings).toEqual([
      { name: "FINALITY_LEDGER", class_name: "FinalityLedger" },
    ]);
    expect(wrangler.migrations.flatMap((m) => m.new_sqlite_classes ?? [])).toContain("FinalityLedger");
    expect(wrangler.triggers.crons.length).toBeGreaterThan(0);
    expect(typeof entry.FinalityLedger).toBe("function");
    expect(typeof entry.default.fetch).toBe("function");
    expect(typeof entry.default.scheduled).toBe("function");
    expect(read(`deploy/workers/${wrangler.main}`)).toContain(
      'export { default, FinalityLedger } from "finality/cloudflare"',
    );
  });

  it("carries a configuration the ledger accepts once its secrets are set, and docs/cloudflare-workers.md names every secret", () => {
    const names = secretNames(wrangler.vars.FINALITY_CONFIG);
    expect(names.length).toBeGreaterThan(0);
    const secrets = Object.fromEntries(names.map((name) => [name, `whsec_${"A".repeat(32)}`]));
    const config = entry.configFromBindings({ FINALITY_CONFIG: wrangler.vars.FINALITY_CONFIG, ...secrets });
    expect(Object.keys(config.providers).sort()).toEqual(["openai", "replicate"]);
    expect(config.effects).toHaveLength(1);
    const readme = read("docs/cloudflare-workers.md");
    for (const name of names) expect(readme).toContain(`wrangler secret put ${name}`);
    // Without its secrets the configuration is refused, naming the missing one.
    expect(() => entry.configFromBindings({ FINALITY_CONFIG: wrangler.vars.FINALITY_CONFIG })).toThrow(
      /OPENAI_API_KEY|OPENAI_WEBHOOK_SECRET|REPLICATE|EFFECT_SECRET/,
    );
  });
});
