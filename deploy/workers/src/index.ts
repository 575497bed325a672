// The Worker is Finality's own entry; re-export it (and the Durable Object class wrangler.toml names).
export { default, FinalityLedger } from "finality/cloudflare";
