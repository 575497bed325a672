import type { ProviderConfig } from "../config/config-schema.js";
import { anthropicKindOf } from "./anthropic/anthropic-states.js";
import { bedrockJobRegion } from "./bedrock/bedrock-states.js";
import { falEndpointOf } from "./fal/fal-states.js";
import { geminiKindOf } from "./gemini/gemini-states.js";
import { batchesOnly } from "./openai/openai-compat.js";
import { openaiKindOf } from "./openai/openai-states.js";
import { encodePath } from "./status-client.js";
import { parseVertexJobName } from "./vertex/vertex-states.js";

/**
 * Why a provider's poller could not poll a job registered with this id and kind, or null when it
 * can. Registration refuses such a job (issue #33.13): it used to be accepted, then every poll
 * failed with "set its kind" while the overview showed nothing wrong.
 */
type UnpollableCheck = (id: string, kind: string | null) => string | null;

/**
 * The check of a provider type, when its poller tells what to ask for from the id or the kind;
 * undefined for those that poll any id (generic, replicate).
 */
export function unpollableCheckFor(type: string, config?: ProviderConfig): UnpollableCheck | undefined {
  switch (type) {
    case "fal": {
      // Without a key nothing is polled: webhooks alone, whatever the kind.
      if (config?.type !== "fal" || config.apiKey === undefined) return undefined;
      const app = config.app;
      return (_id, kind) =>
        falEndpointOf(kind, app) === null
          ? 'a fal job must have its endpoint id as its kind (e.g. "fal-ai/flux/dev"), or the provider must set `app`'
          : null;
    }
    case "openai":
      // Together's and Mistral's ids name batches only, whatever their shape.
      if (config?.type === "openai" && batchesOnly(config.compat)) return undefined;
      return (id, kind) =>
        openaiKindOf(id, kind) === null
          ? 'an OpenAI job id must start with "resp_" or "batch_", or the job must have kind "response" or "batch"'
          : null;
    case "anthropic":
      return (id, kind) =>
        anthropicKindOf(id, kind) === null
          ? 'an Anthropic job id must start with "msgbatch_" or "sesn_", or the job must have kind "message_batch" or "session"'
          : null;
    case "gemini":
      return geminiCheck;
    case "bedrock":
      return (id) =>
        bedrockJobRegion(id) === null
          ? "an Amazon Bedrock job id must be the job's ARN (arn:aws:bedrock:{region}:{account}:model-invocation-job/{id}), as CreateModelInvocationJob answers it"
          : null;
    case "vertex":
      return (id) =>
        parseVertexJobName(id) === null
          ? "a Vertex AI job id must be the job's resource name (projects/{project}/locations/{location}/batchPredictionJobs/{id}), as batchPredictionJobs.create answers it"
          : null;
    default:
      return undefined;
  }
}

function geminiCheck(id: string, kind: string | null): string | null {
  const resolved = geminiKindOf(id, kind);
  if (resolved === null)
    return 'a Gemini job id must start with "batches/", "operations/" or "interactions/" (or hold "/operations/"), or the job must have kind "batch", "operation" or "interaction"';
  // As the poller names it (gemini-status.ts): an empty, "." or ".." segment names no resource.
  const name = resolved === "interaction" ? `interactions/${id.replace(/^interactions\//, "")}` : id;
  return encodePath(name) === null
    ? `"${id}" is not a Gemini resource name (an empty, "." or ".." segment)`
    : null;
}
