import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../docs/markdown.js";
import { type Service, startService, tempDir } from "../http/helpers/service.js";

// The example of docs/http-api.md, run as written (only the address changed) in a fresh Node
// process that imports `finality/client` by name from the built package, against a real
// `finality serve` with an API token.

const run = promisify(execFile);
const TOKEN = "docs-example-token-0123456789";
let service: Service;
const dir = tempDir();

beforeAll(async () => {
  service = await startService({ db: dir.file("ledger.db"), env: { FINALITY_API_TOKEN: TOKEN } });
});
afterAll(async () => {
  await service?.stop();
  dir.cleanup();
});

/** The first ```js block after `marker` in `markdown`. */
function exampleAfter(markdown: string, marker: string): string {
  const from = markdown.indexOf(marker);
  const block = /```js\n([\s\S]*?)```/.exec(markdown.slice(from));
  if (from < 0 || !block?.[1]) throw new Error(`no js example after ${marker}`);
  return block[1];
}

describe("docs/http-api.md's client example", () => {
  it("runs against finality serve and does what it says", async () => {
    const page = readFileSync(join(ROOT, "docs/http-api.md"), "utf8");
    const example = exampleAfter(page, "**`finality/client`**").replaceAll(
      "http://127.0.0.1:8787",
      service.url,
    );
    // Inside the package's folder, so that `finality/client` resolves to the package itself.
    const folder = join(ROOT, ".tmp");
    mkdirSync(folder, { recursive: true });
    const file = join(folder, `client-example-${process.pid}.mjs`);
    writeFileSync(
      file,
      `${example}\nconsole.log(JSON.stringify({ created, state: job.state, events: items.length }));\n`,
    );
    try {
      const { stdout } = await run(process.execPath, [file], {
        env: { ...process.env, FINALITY_API_TOKEN: TOKEN },
      });
      expect(JSON.parse(stdout)).toEqual({ created: true, state: "pending", events: 2 });
    } finally {
      rmSync(file, { force: true });
    }
    const job = await fetch(`${service.url}/v1/jobs/generic/operations%2Fabc`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(((await job.json()) as { state: string }).state).toBe("cancelled");
  });
});
