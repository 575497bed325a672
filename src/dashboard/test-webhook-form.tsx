import type { ProviderConfig } from "../config/config-schema.js";
import { POLL_ONLY_TYPES } from "../config/provider-config-schema.js";
import { IGNORE_REASONS } from "../core/model.js";
import type { CanonicalState } from "../core/states.js";
import { testWebhookStates, testWebhookUnavailable } from "../providers/test-webhook.js";
import { JobLink } from "./components.js";
import { choicesOf, LabelledSelect } from "./filter-select.js";
import { hasWebhookSecret } from "./first-steps.js";
import { queryString } from "./format.js";

export const TEST_WEBHOOK_PATH = "/config/test-webhook";

/** What the form asks for, checked: the provider can sign, the state is one it reports. */
interface TestWebhookRequest {
  provider: string;
  config: ProviderConfig;
  jobId: string;
  state: CanonicalState;
  result?: unknown;
}

/** What the form was filled with, shown again after a refusal so nothing has to be retyped. */
interface TestWebhookDraft {
  jobId: string;
  state: string;
  result: string;
}

/** The last test webhook of one provider: refused before sending, or what the webhook route answered. */
export type TestWebhookNotice = TestWebhookRefusal | TestWebhookDelivery;

/** Refused before signing: nothing was sent. */
interface TestWebhookRefusal {
  provider: string;
  refused: string;
  draft: TestWebhookDraft;
}

/** What the webhook route answered: its status, and the outcome (200) or the problem's code. */
interface TestWebhookDelivery {
  provider: string;
  status: number;
  outcome: string;
  jobId: string;
  detail?: string;
}

const JOB_ID_LIMIT = 512;

/** The form's fields, or why they cannot be sent (nothing is signed or sent then). */
export function parseTestWebhookForm(
  form: URLSearchParams,
  providers: Readonly<Record<string, ProviderConfig>>,
): TestWebhookRequest | TestWebhookRefusal {
  const provider = form.get("provider") ?? "";
  const draft = {
    jobId: form.get("jobId") ?? "",
    state: form.get("state") ?? "",
    result: form.get("result") ?? "",
  };
  const refuse = (refused: string): TestWebhookRefusal => ({ provider, refused, draft });
  const config = Object.hasOwn(providers, provider) ? providers[provider] : undefined;
  if (config === undefined) return refuse(`No provider instance named "${provider}" is configured.`);
  const unavailable = testWebhookUnavailable(provider, config);
  if (unavailable !== null) return refuse(`Nothing sent: ${unavailable}.`);
  const jobId = draft.jobId.trim();
  if (jobId === "") return refuse("Enter the job id the webhook is about.");
  if (jobId.length > JOB_ID_LIMIT) return refuse(`The job id is longer than ${JOB_ID_LIMIT} characters.`);
  const states = testWebhookStates(config);
  const state = states.find((s) => s === draft.state);
  if (state === undefined)
    return refuse(`Unknown state "${draft.state}": choose one of ${states.join(", ")}.`);
  if (draft.result.trim() === "") return { provider, config, jobId, state };
  try {
    return { provider, config, jobId, state, result: JSON.parse(draft.result) };
  } catch (error) {
    return refuse(`The result is not JSON (${(error as Error).message}); leave it empty for none.`);
  }
}

/** Outcomes a webhook route answers 200 with: the only ones a redirect may show. */
const DELIVERED_OUTCOMES = new Set<string>(["applied", ...IGNORE_REASONS]);

/** The redirect after a delivered test webhook: its outcome in the query, at the provider's form. */
export function deliveredLocation(provider: string, outcome: string, jobId: string): string {
  return `/config${queryString({ "test-webhook": provider, outcome, job: jobId })}#test-webhook-${encodeURIComponent(provider)}`;
}

/** The notice in a redirect's query, when it names a configured provider and a known outcome. */
export function deliveredNotice(
  query: Record<string, string>,
  providers: Readonly<Record<string, ProviderConfig>>,
): TestWebhookDelivery | null {
  const provider = query["test-webhook"];
  const { outcome, job } = query;
  if (provider === undefined || !Object.hasOwn(providers, provider)) return null;
  if (outcome === undefined || !DELIVERED_OUTCOMES.has(outcome)) return null;
  if (job === undefined || job === "" || job.length > JOB_ID_LIMIT) return null;
  return { provider, status: 200, outcome, jobId: job };
}

/**
 * One "send test webhook" form per provider instance that can sign one: a webhook signed with
 * the instance's own secret (never shown) and handed to this service's webhook route, so a
 * person can watch a job settle without a provider. Outside the live part: a refresh must not
 * wipe what is being typed.
 */
export function TestWebhookForms(props: {
  providers: Readonly<Record<string, ProviderConfig>>;
  notice: TestWebhookNotice | null;
}) {
  const entries = Object.entries(props.providers);
  if (entries.length === 0) return null;
  const { notice } = props;
  // A refusal for a provider with no form of its own (unknown, or one that cannot sign) goes on top.
  const formless =
    notice !== null &&
    !entries.some(
      ([name, config]) => name === notice.provider && testWebhookUnavailable(name, config) === null,
    );
  return (
    <section id="test-webhooks">
      <h2>Send a test webhook</h2>
      <p class="muted small">
        Signed with the provider's configured secret and delivered to this service's own{" "}
        <code>/webhooks/&lt;provider&gt;</code> route, exactly as a real one: it is verified, then recorded in
        the ledger (and fires the effects of a job it settles). Like <code>finality send</code>.
      </p>
      {formless && <NoticeOf notice={notice} />}
      {entries.map(([name, config]) => (
        <ProviderTestWebhook name={name} config={config} notice={notice?.provider === name ? notice : null} />
      ))}
    </section>
  );
}

function ProviderTestWebhook(props: {
  name: string;
  config: ProviderConfig;
  notice: TestWebhookNotice | null;
}) {
  const { name, config, notice } = props;
  if (!hasWebhookSecret(config) && !POLL_ONLY_TYPES.has(config.type))
    return (
      <p id={`test-webhook-${name}`} data-test-webhook={name} data-form="none">
        <span class="mono">{name}</span>: webhooks are refused (401) until a secret is set — add{" "}
        <code>providers.{name}.webhook.secrets</code>.
      </p>
    );
  const unavailable = testWebhookUnavailable(name, config);
  if (unavailable !== null)
    return (
      <p id={`test-webhook-${name}`} data-test-webhook={name} data-form="none" class="small">
        <span class="mono">{name}</span>: no test webhook — {unavailable}.
      </p>
    );
  const draft = notice !== null && "refused" in notice ? notice.draft : null;
  return (
    <div id={`test-webhook-${name}`} data-test-webhook={name}>
      {notice !== null && <NoticeOf notice={notice} />}
      <form class="filters" method="post" action={TEST_WEBHOOK_PATH} data-form="test-webhook">
        <input type="hidden" name="provider" value={name} />
        <span class="field">
          provider <span class="mono">{name}</span>
        </span>
        <label>
          job id
          <input name="jobId" required maxlength={JOB_ID_LIMIT} value={draft?.jobId ?? ""} />
        </label>
        <LabelledSelect
          label="state"
          name="state"
          choices={choicesOf(testWebhookStates(config))}
          selected={draft?.state ?? "succeeded"}
        />
        <label>
          result (JSON, optional)
          <input name="result" class="mono" placeholder='{"url": "s3://out/1"}' value={draft?.result ?? ""} />
        </label>
        <button type="submit">Send</button>
      </form>
    </div>
  );
}

function NoticeOf(props: { notice: TestWebhookNotice }) {
  const { notice } = props;
  if ("refused" in notice)
    return (
      <div class="flash error" role="alert" data-notice="refused">
        {notice.refused}
      </div>
    );
  const ok = notice.status === 200;
  return (
    <div class={ok ? "flash" : "flash error"} role="status" data-notice={notice.outcome}>
      Test webhook for <JobLink provider={notice.provider} id={notice.jobId} />: {notice.status}{" "}
      <strong>{notice.outcome}</strong>
      {notice.detail !== undefined && <> — {notice.detail}</>}
    </div>
  );
}
