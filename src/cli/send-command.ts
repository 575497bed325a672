import { Argument, type Command } from "commander";
import { BUILT_IN_PROVIDER, loadConfig } from "../config/load-config.js";
import { usesBuiltInProvider } from "../config/parse-config.js";
import { webhookConfigOf } from "../config/provider-config-schema.js";
import { FinalityError } from "../core/errors.js";
import { CANONICAL_STATES, type CanonicalState } from "../core/states.js";
import { signTestWebhook } from "../providers/test-webhook.js";
import { examples, type JsonOption, jsonArgument, usageError, withJsonOption } from "./cli-common.js";
import { printJson, styleFor } from "./cli-output.js";

interface SendOptions extends JsonOption {
  config?: string;
  url?: string;
  result?: unknown;
  id?: string;
}

/** `finality send`: a signed test webhook, posted to a running service. */
export function addSendCommand(program: Command): void {
  withJsonOption(program.command("send"))
    .description("sign a test webhook with the provider's configured secret and post it to the service")
    .argument("<provider>", "provider instance name (its webhook secret signs the request)")
    .argument("<jobId>", "the job id the webhook is about")
    .addArgument(new Argument("<state>", "the state it reports").choices(CANONICAL_STATES))
    .option("-c, --config <file>", "JSON configuration file (default: $FINALITY_CONFIG, else none)")
    .option("--url <url>", "the service (default: http://<server.host>:<server.port> of the configuration)")
    .option("--result <json>", "the job's result, as JSON", jsonArgument)
    .option("--id <deliveryId>", "the delivery id (default: a new one; the same id twice is a duplicate)")
    .addHelpText(
      "after",
      examples(
        "FINALITY_WEBHOOK_SECRET=whsec_... finality send generic job-1 succeeded",
        `finality send acme job-42 succeeded --result '{"url": "s3://out/42"}' --config finality.config.json`,
        "finality send acme job-42 running --url http://127.0.0.1:9000 --json",
      ),
    )
    .action(async (provider: string, jobId: string, state: CanonicalState, options: SendOptions) => {
      const config = loadConfig({ file: options.config, env: process.env });
      const providerConfig = config.providers[provider];
      if (providerConfig === undefined)
        throw usageError(
          `unknown provider "${provider}": the configuration has ${Object.keys(config.providers).join(", ")}`,
        );
      // Without a configuration file the only provider is the built-in one, signed with
      // FINALITY_WEBHOOK_SECRET: advising a `providers.generic.webhook.secrets` key would send the
      // user to write a file that nothing else needs.
      if (
        usesBuiltInProvider(config) &&
        provider === BUILT_IN_PROVIDER &&
        webhookConfigOf(providerConfig) === undefined
      )
        throw new FinalityError(
          "invalid-config",
          `provider "${BUILT_IN_PROVIDER}" has no webhook secret: set FINALITY_WEBHOOK_SECRET to the value \`finality serve\` runs with (e.g. FINALITY_WEBHOOK_SECRET=whsec_... finality send ${BUILT_IN_PROVIDER} ${jobId} ${state})`,
          { details: { field: "FINALITY_WEBHOOK_SECRET" } },
        );
      const signed = await signTestWebhook(provider, providerConfig, {
        jobId,
        state,
        now: Date.now(),
        ...(options.result !== undefined ? { result: options.result } : {}),
        ...(options.id !== undefined ? { id: options.id } : {}),
      });
      const base = (options.url ?? serviceUrl(config.server.host, config.server.port)).replace(/\/+$/, "");
      const url = `${base}${signed.path}`;
      let response: Response;
      try {
        response = await fetch(url, { method: "POST", headers: signed.headers, body: signed.body });
      } catch (error) {
        throw new FinalityError(
          "store-unavailable",
          `cannot reach ${url}: ${underlyingCause(error)} (is \`finality serve\` running there? --url names another address)`,
          { cause: error },
        );
      }
      const text = await response.text();
      let answer: unknown = text;
      try {
        answer = JSON.parse(text);
      } catch {
        // not JSON: shown as text
      }
      if (options.json) printJson({ url, status: response.status, answer });
      else {
        const style = styleFor();
        const what = response.ok ? style.green(String(response.status)) : style.red(String(response.status));
        const detail = typeof answer === "object" && answer !== null ? JSON.stringify(answer) : text;
        process.stdout.write(`POST ${url} → ${what} ${detail}\n`);
      }
      if (!response.ok) process.exitCode = 1;
    });
}

/** Where a local client reaches a service bound to `host` (a wildcard address means this machine). */
function serviceUrl(host: string, port: number): string {
  if (host === "0.0.0.0") return `http://127.0.0.1:${port}`;
  if (host === "::" || host === "[::]") return `http://[::1]:${port}`;
  return `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

/**
 * fetch says only "fetch failed"; what happened is at the end of its `cause` chain
 * (`connect ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND …`, `bad port`).
 */
function underlyingCause(error: unknown): string {
  let message = "fetch failed";
  let code: string | undefined;
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    message = current.message;
    const own = (current as { code?: unknown }).code;
    if (typeof own === "string" && own !== "") code = own;
    current = current.cause;
  }
  return code === undefined || message.includes(code) ? message : `${code}: ${message}`;
}
