import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TempDir {
  path: string;
  /** A path inside the directory (the file itself is not created). */
  file(name: string): string;
  cleanup(): void;
}

/** A fresh directory under the OS temp dir; every test gets its own database file. */
export function tempDir(prefix = "finality-test-"): TempDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return {
    path,
    file: (name) => join(path, name),
    cleanup: () => rmSync(path, { recursive: true, force: true }),
  };
}
