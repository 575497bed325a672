import { FinalityError } from "../core/errors.js";
import type { WebhookReceiver } from "../webhooks/receiver-types.js";

/**
 * The receiver of a provider that sends no webhooks (Amazon Bedrock batch inference, Vertex AI
 * batch prediction): every delivery is refused as unsigned, since nothing could prove who sent
 * it. Its jobs are settled by polls and discovery alone.
 */
export function pollOnlyReceiver(provider: string, what: string): WebhookReceiver {
  const refuse = (): never => {
    throw new FinalityError(
      "signature-invalid",
      `provider "${provider}" takes no webhooks: ${what} sends none; its jobs are polled`,
      { details: { reason: "no-matching-signature", provider } },
    );
  };
  return { provider, checkHeaders: refuse, verify: refuse, parse: refuse };
}
