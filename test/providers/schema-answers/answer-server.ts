import { FakeServer } from "../../fakes/fake-server.js";

/**
 * A provider's status API reduced to what the property tests drive: each path answers the body
 * last set for it (200), anything else 404. The credentials are the adapters' own concern,
 * tested with each provider's fake; here only the bodies vary.
 */
export class AnswerServer {
  private readonly bodies = new Map<string, unknown>();
  readonly server = new FakeServer(
    (request) => {
      const body = this.bodies.get(request.path);
      return body === undefined ? null : { status: 200, body };
    },
    () => null,
    () => ({ error: "not found" }),
  );

  listen(): Promise<string> {
    return this.server.listen();
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** From now on, `path` answers `body`. */
  answer(path: string, body: unknown): void {
    this.bodies.set(path, body);
  }
}
