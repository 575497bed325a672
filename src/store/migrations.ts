import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The package's `migrations/<dialect>/NNNN_name.sql` files, in order. */
export function loadMigrations(dialect: "sqlite" | "postgres"): Migration[] {
  // Same relative path from src/store (tests) and dist/store (built package).
  const dir = fileURLToPath(new URL(`../../migrations/${dialect}/`, import.meta.url));
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(dir + file, "utf8"),
    }));
}
