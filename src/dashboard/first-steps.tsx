import type { FinalityConfig, ProviderConfig } from "../config/config-schema.js";
import { POLL_ONLY_TYPES, webhookConfigOf } from "../config/provider-config-schema.js";

/** What the overview needs to know about the set-up to tell a new user what to do. */
export interface Setup {
  /** Provider instances, in configuration order. */
  providers: string[];
  /** Instances without a webhook secret (or Gemini JWT keys): their webhooks are refused with 401. */
  unsigned: string[];
  /** True when no configuration file named providers: the built-in `generic` instance runs. */
  builtIn: boolean;
}

export function setupOf(config: FinalityConfig, builtInName: string): Setup {
  const entries = Object.entries(config.providers);
  const unsigned = entries
    .filter(([, provider]) => !POLL_ONLY_TYPES.has(provider.type) && !hasWebhookSecret(provider))
    .map(([name]) => name);
  const builtIn =
    entries.length === 1 && entries[0]?.[0] === builtInName && entries[0]?.[1].type === "generic";
  return { providers: entries.map(([name]) => name), unsigned, builtIn };
}

/** True when the instance can check a webhook: a secret, or Gemini's JWT keys. */
export function hasWebhookSecret(provider: ProviderConfig): boolean {
  const webhook = webhookConfigOf(provider) as { secrets?: string[]; jwt?: unknown } | undefined;
  return (webhook?.secrets?.length ?? 0) > 0 || webhook?.jwt !== undefined;
}

/** Providers whose webhooks are refused because no secret is set: shown whether or not there are jobs. */
export function UnsignedWarning(props: { setup: Setup }) {
  const { unsigned, builtIn } = props.setup;
  if (unsigned.length === 0) return null;
  return (
    <div class="flash error" role="alert" id="unsigned-providers">
      Webhooks to {unsigned.map((name) => `/webhooks/${name}`).join(", ")} are refused (401): no webhook
      secret is set
      {builtIn ? (
        <>
          . Start the service with <code>FINALITY_WEBHOOK_SECRET="whsec_$(openssl rand -base64 32)"</code>{" "}
          exported.
        </>
      ) : (
        <>
          {" "}
          for {unsigned.join(", ")}. Add <code>webhook.secrets</code> to{" "}
          {unsigned.length === 1 ? "its" : "their"} entry under <code>providers</code>.
        </>
      )}{" "}
      See the <a href="/config">configuration page</a>.
    </div>
  );
}

/**
 * The overview of a ledger with no jobs yet: three ways to see something happen. `origin` is the
 * address the browser reached the dashboard at, so the curl line runs as it is copied.
 */
export function FirstSteps(props: { setup: Setup; origin: string }) {
  const provider = props.setup.providers[0] ?? "generic";
  return (
    <section class="panel" id="first-steps">
      <h2>No jobs yet</h2>
      <p>
        Finality shows a job once it is registered or a signed webhook names it. Any of these gets you
        started:
      </p>
      <ol>
        <li>
          <strong>Register a job</strong> with the API or the CLI:
          <pre>
            {`curl -s -X POST ${props.origin}/v1/jobs -H 'content-type: application/json' \\
  -d '{"provider": "${provider}", "id": "my-first-job"}'
npx finality jobs register ${provider} my-first-job`}
          </pre>
        </li>
        <li>
          <strong>Send a test webhook</strong>, signed with the provider's configured secret:
          <pre>{`npx finality send ${provider} my-first-job succeeded`}</pre>
        </li>
        <li>
          <strong>Run the demo</strong>: fake providers that lose and repeat webhooks, effects and workers, on
          a temporary database:
          <pre>npm run demo</pre>
        </li>
      </ol>
      <p class="small muted">
        From a checkout the CLI is <code>npx finality</code>; installed globally it is <code>finality</code>.
        The getting-started guide is docs/getting-started.md.
      </p>
    </section>
  );
}
