import type { Environment } from "../config/env-overrides.js";
import { type ConfigFlags, loadConfig } from "../config/load-config.js";
import { openStore } from "../host/node/finality-from-config.js";

/** `finality migrate`: applies pending migrations (serve also does this at start) and says so. */
export async function migrate(options: {
  configFile?: string | undefined;
  flags: ConfigFlags;
  env: Environment;
}): Promise<string> {
  // Migrations touch the store alone: provider keys (`env:OPENAI_API_KEY`) need not be set to run them.
  const config = loadConfig({
    file: options.configFile,
    env: options.env,
    flags: options.flags,
    resolveSecrets: false,
  });
  const store = await openStore(config.store);
  try {
    const where = "sqlite" in config.store ? config.store.sqlite : "postgres";
    if (!(await store.ready())) return `${where}: migrations are still pending`;
    return `${where}: migrated, up to date`;
  } finally {
    await store.close();
  }
}
