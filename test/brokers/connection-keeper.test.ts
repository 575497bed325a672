import { describe, expect, it } from "vitest";
import { keepConnection } from "../../src/engine/brokers/connection-keeper.js";
import { DeliveryError } from "../../src/engine/delivery-error.js";

// The keeper's rules on a manual clock: one connection kept, failures backed off without ever
// waiting, a dropped connection replaced, and credentials scrubbed from the reported error.

function keeper(outcomes: (string | Error)[]) {
  let now = 0;
  const opened: string[] = [];
  const closed: string[] = [];
  const kept = keepConnection<string>({
    name: "nats nats://127.0.0.1:4222",
    now: () => now,
    redact: (text) => text.replaceAll("hunter2", "[redacted]"),
    open: async () => {
      const next = outcomes.shift() ?? new Error("no more");
      if (next instanceof Error) throw next;
      opened.push(next);
      return next;
    },
    close: async (connection) => void closed.push(connection),
  });
  return { kept, opened, closed, advance: (ms: number) => (now += ms) };
}

describe("the broker connection keeper", () => {
  it("opens once and keeps the connection", async () => {
    const { kept, opened } = keeper(["a", "b"]);
    expect(await Promise.all([kept.get(), kept.get()])).toEqual(["a", "a"]);
    expect(await kept.get()).toBe("a");
    expect(opened).toEqual(["a"]);
    expect(kept.status()).toEqual({ connected: true });
  });

  it("backs off after a failure, failing at once meanwhile, with doubling gaps", async () => {
    const refused = new Error("connect ECONNREFUSED (user:hunter2)");
    const { kept, advance } = keeper([refused, refused, "a"]);
    await expect(kept.get()).rejects.toThrow(DeliveryError);
    await expect(kept.get()).rejects.toThrow(/next try in 100 ms/);
    advance(100);
    await expect(kept.get()).rejects.toThrow(/unreachable/);
    advance(199);
    await expect(kept.get()).rejects.toThrow(/next try in 1 ms/);
    expect(kept.status()).toEqual({ connected: false, error: "connect ECONNREFUSED (user:[redacted])" });
    advance(1);
    expect(await kept.get()).toBe("a");
    expect(kept.status()).toEqual({ connected: true });
  });

  it("replaces a dropped connection, and ignores a late drop of an earlier one", async () => {
    const { kept, closed } = keeper(["a", "b"]);
    expect(await kept.get()).toBe("a");
    kept.drop("a", new Error("closed by server"));
    expect(kept.status()).toEqual({ connected: false, error: "closed by server" });
    expect(await kept.get()).toBe("b");
    kept.drop("a");
    expect(await kept.get()).toBe("b");
    await kept.close();
    expect(closed).toEqual(["a", "b"]);
  });
});
