import type { ProviderConfig } from "../config/config-schema.js";
import { assertNever } from "../core/errors.js";
import type { AdapterDeps, ProviderAdapter } from "./adapter-types.js";
import { createAnthropicAdapter } from "./anthropic/anthropic-adapter.js";
import { createBedrockAdapter } from "./bedrock/bedrock-adapter.js";
import { createFalAdapter } from "./fal/fal-adapter.js";
import { createGeminiAdapter } from "./gemini/gemini-adapter.js";
import { createGenericAdapter } from "./generic/generic-adapter.js";
import { createOpenAIAdapter } from "./openai/openai-adapter.js";
import { createReplicateAdapter } from "./replicate/replicate-adapter.js";
import { createVertexAdapter } from "./vertex/vertex-adapter.js";

/** The adapter for one configured provider instance, by its `type`. */
export function createProviderAdapter(
  name: string,
  config: ProviderConfig,
  deps: AdapterDeps,
): ProviderAdapter {
  // A poll answer's time is not checked here: an answer with a time out of range still carries
  // the job's state, and ingest drops or cuts the time (core/ordering-time.ts) and says why.
  return adapterOfType(name, config, deps);
}

function adapterOfType(name: string, config: ProviderConfig, deps: AdapterDeps): ProviderAdapter {
  const type = config.type;
  switch (type) {
    case "gemini":
      return createGeminiAdapter(name, config, deps);
    case "openai":
      return createOpenAIAdapter(name, config, deps);
    case "anthropic":
      return createAnthropicAdapter(name, config, deps);
    case "replicate":
      return createReplicateAdapter(name, config, deps);
    case "generic":
      return createGenericAdapter(name, config, deps);
    case "bedrock":
      return createBedrockAdapter(name, config, deps);
    case "vertex":
      return createVertexAdapter(name, config, deps);
    case "fal":
      return createFalAdapter(name, config, deps);
    default:
      return assertNever(type, "provider type");
  }
}
