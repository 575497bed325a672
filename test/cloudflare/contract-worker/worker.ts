// A Worker that runs the store contract (test/store/contract.ts) inside workerd against the
// Durable Object store: one fresh object per test, named after it.
import type { DurableObjectNamespace, DurableObjectState } from "../../../src/cloudflare/cloudflare-types.js";
import { createDurableObjectStore } from "../../../src/cloudflare/durable-object-store.js";
import { runStoreContract } from "../../store/contract.js";
import { registered, runRegistered } from "./vitest-shim.js";

let storage: DurableObjectState["storage"] | null = null;

runStoreContract("durable object", async () => {
  if (storage === null) throw new Error("no Durable Object is running a test");
  const current = storage;
  return {
    store: createDurableObjectStore(current),
    reopen: async () => createDurableObjectStore(current),
    openSecond: async () => createDurableObjectStore(current),
    cleanup: async () => {},
  };
});

export class ContractObject {
  constructor(private readonly ctx: DurableObjectState) {}

  async fetch(request: Request): Promise<Response> {
    const name = new URL(request.url).searchParams.get("name") ?? "";
    storage = this.ctx.storage;
    try {
      return Response.json(await runRegistered(name));
    } finally {
      storage = null;
    }
  }
}

export default {
  async fetch(request: Request, env: { CONTRACT: DurableObjectNamespace }): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/list") return Response.json([...registered.keys()]);
    const name = url.searchParams.get("name") ?? "";
    return env.CONTRACT.get(env.CONTRACT.idFromName(name)).fetch(request);
  },
};
