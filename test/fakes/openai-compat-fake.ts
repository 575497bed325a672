import { FakeServer, header, type SeenRequest } from "./fake-server.js";

/**
 * Batch APIs that copy OpenAI's, one server for the three, each at its documented path and in its
 * documented shape (Bearer auth everywhere):
 * - Groq, `GET /openai/v1/batches/{id}`: OpenAI's batch object (https://console.groq.com/docs/batch);
 * - Together, `GET /v1/batches/{id}`: upper-case statuses, `batch-…` ids, ISO 8601 times
 *   (https://docs.together.ai/docs/inference/batch/manage);
 * - Mistral, `GET /v1/batch/jobs/{id}`: UUID ids, its own statuses, `output_file` / `error_file`
 *   and request counts, Unix-second times (https://docs.mistral.ai/capabilities/batch/).
 */
export class OpenAICompatFake {
  readonly groq = new Map<string, Record<string, unknown>>();
  readonly together = new Map<string, Record<string, unknown>>();
  readonly mistral = new Map<string, Record<string, unknown>>();
  readonly server: FakeServer;

  constructor(readonly apiKey = "compat-test-key") {
    this.server = new FakeServer(
      (request) => this.route(request),
      (request) =>
        header(request, "authorization") === `Bearer ${this.apiKey}`
          ? null
          : { status: 401, body: { error: { message: "Invalid API Key" } } },
      () => ({ error: { message: "not found" } }),
    );
  }

  listen(): Promise<string> {
    return this.server.listen();
  }

  close(): Promise<void> {
    return this.server.close();
  }

  groqBatch(id: string, status: string): void {
    this.groq.set(id, {
      id,
      object: "batch",
      endpoint: "/v1/chat/completions",
      input_file_id: "file_01",
      completion_window: "24h",
      status,
      output_file_id: status === "completed" ? "file_out" : null,
      error_file_id: null,
      created_at: 1_767_225_600,
      completed_at: status === "completed" ? 1_767_229_200 : null,
      request_counts: { total: 2, completed: 2, failed: 0 },
      metadata: null,
    });
  }

  togetherBatch(id: string, status: string): void {
    this.together.set(id, {
      id,
      user_id: "user_1",
      input_file_id: "file-in",
      file_size_bytes: 1024,
      status,
      job_deadline: "2026-01-02T00:00:00Z",
      created_at: "2026-01-01T00:00:00Z",
      endpoint: "/v1/chat/completions",
      progress: status === "COMPLETED" ? 100 : 40,
      output_file_id: status === "COMPLETED" ? "file-out" : null,
      error_file_id: null,
      error: status === "FAILED" ? "input file is not valid JSONL" : null,
      completed_at: status === "COMPLETED" ? "2026-01-01T01:00:00Z" : null,
    });
  }

  mistralJob(id: string, status: string, metadata: Record<string, string> | null = null): void {
    const done = ["SUCCESS", "FAILED", "TIMEOUT_EXCEEDED", "CANCELLED"].includes(status);
    this.mistral.set(id, {
      id,
      object: "batch",
      input_files: ["file-in"],
      endpoint: "/v1/chat/completions",
      model: "mistral-small-latest",
      metadata,
      output_file: status === "SUCCESS" ? "file-out" : null,
      error_file: null,
      errors: status === "FAILED" ? [{ message: "invalid input file", count: 1 }] : [],
      status,
      created_at: 1_767_225_600,
      total_requests: 2,
      completed_requests: done ? 2 : 1,
      succeeded_requests: status === "SUCCESS" ? 2 : 0,
      failed_requests: status === "FAILED" ? 2 : 0,
      started_at: status === "QUEUED" ? null : 1_767_225_660,
      completed_at: done ? 1_767_229_200 : null,
    });
  }

  private route(request: SeenRequest) {
    if (request.method !== "GET") return null;
    const at = (pattern: RegExp, store: Map<string, Record<string, unknown>>) => {
      const match = pattern.exec(request.path);
      const found = match ? store.get(decodeURIComponent(match[1] as string)) : undefined;
      return found === undefined ? null : { status: 200, body: found };
    };
    if (request.path === "/v1/batches") return { status: 200, body: [...this.together.values()] };
    if (request.path === "/v1/batch/jobs") {
      const page = Number(request.query.get("page") ?? "0");
      const size = Number(request.query.get("page_size") ?? "100");
      const all = [...this.mistral.values()];
      return {
        status: 200,
        body: { object: "list", data: all.slice(page * size, (page + 1) * size), total: all.length },
      };
    }
    return (
      at(/^\/openai\/v1\/batches\/([^/]+)$/, this.groq) ??
      at(/^\/v1\/batches\/([^/]+)$/, this.together) ??
      at(/^\/v1\/batch\/jobs\/([^/]+)$/, this.mistral)
    );
  }
}
