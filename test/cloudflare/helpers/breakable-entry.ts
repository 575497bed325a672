// The Worker with ledger objects a test can break: `POST /__test/break?shard=<object name>` makes
// that object throw on every request from then on (held in its memory, as an object whose code
// or storage fails would). Everything else is the real Worker and the real object.
import worker, { FinalityLedger } from "../../../src/cloudflare/index.js";

const BREAK_PATH = "/__test/break";

export class BreakableLedger extends FinalityLedger {
  #broken = false;

  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname === BREAK_PATH) {
      this.#broken = true;
      return new Response("broken");
    }
    if (this.#broken) throw new Error("this ledger shard is broken (test)");
    return super.fetch(request);
  }
}

export default {
  fetch(
    request: Request,
    env: {
      FINALITY_LEDGER: {
        idFromName(name: string): unknown;
        get(id: unknown): { fetch(r: Request): Promise<Response> };
      };
    },
  ) {
    const url = new URL(request.url);
    if (url.pathname === BREAK_PATH) {
      const name = url.searchParams.get("shard") ?? "";
      return env.FINALITY_LEDGER.get(env.FINALITY_LEDGER.idFromName(name)).fetch(request);
    }
    return worker.fetch(request, env as never);
  },
  scheduled: worker.scheduled,
};
