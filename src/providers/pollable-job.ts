import { anthropicKindOf } from "./anthropic/anthropic-states.js";
import { geminiKindOf } from "./gemini/gemini-states.js";
import { openaiKindOf } from "./openai/openai-states.js";
import { encodePath } from "./status-client.js";

/**
 * Why a provider's poller could not poll a job registered with this id and kind, or null when it
 * can. Registration refuses such a job (issue #33.13): it used to be accepted, then every poll
 * failed with "set its kind" while the overview showed nothing wrong.
 */
export type UnpollableCheck = (id: string, kind: string | null) => string | null;

/**
 * The check of a provider type, when its poller tells what to ask for from the id or the kind;
 * undefined for those that poll any id (generic, replicate).
 */
export function unpollableCheckFor(type: string): UnpollableCheck | undefined {
  switch (type) {
    case "openai":
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
