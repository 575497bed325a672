import { BedrockFake } from "../fakes/bedrock-fake.js";
import { FalFake } from "../fakes/fal-fake.js";
import { OpenAICompatFake } from "../fakes/openai-compat-fake.js";
import { VertexFake } from "../fakes/vertex-fake.js";

/**
 * The fakes of the providers that speak their vendor's own API (fal, Amazon Bedrock, Vertex AI,
 * Mistral's OpenAI-compatible batches), all on 127.0.0.1: started before a deployment, since its
 * configuration names their URLs and keys.
 */
export class VendorFakes {
  readonly fal = new FalFake();
  readonly bedrock = new BedrockFake();
  readonly vertex = new VertexFake();
  readonly compat = new OpenAICompatFake();

  async listen(): Promise<void> {
    await Promise.all([this.fal.listen(), this.bedrock.listen(), this.vertex.listen(), this.compat.listen()]);
  }

  async close(): Promise<void> {
    await Promise.all([this.fal.close(), this.bedrock.close(), this.vertex.close(), this.compat.close()]);
  }
}
