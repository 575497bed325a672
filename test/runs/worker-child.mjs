// A worker process for the HTTP tests, on the built `finality/worker-client`.
// Usage: node worker-child.mjs <baseUrl> <workerId> <kind> <leaseSeconds>
// Takes ONE run, then stops. Prints:
//   "started <runId> <attemptId> <generation>" when its handler starts;
//   "aborted <reason>" if the handler's signal fires;
//   "done" once the worker has stopped (after its report, if any).
// The handler finishes with {"by": workerId} when the line "finish" arrives on stdin.
import { createInterface } from "node:readline";
import { createWorker } from "../../dist/worker/worker-client.js";

const [baseUrl, workerId, kind, leaseSeconds] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin });
let finish = () => {};
lines.on("line", (line) => {
  if (line === "finish") finish();
});

const worker = createWorker({
  baseUrl,
  workerId,
  kinds: [kind],
  leaseSeconds: Number(leaseSeconds),
  waitSeconds: 5,
  handler: async (run, { signal }) => {
    void worker.stop().then(() => {
      process.stdout.write("done\n");
      process.exit(0);
    });
    process.stdout.write(`started ${run.id} ${run.attempt.id} ${run.attempt.generation}\n`);
    await new Promise((resolve, reject) => {
      finish = resolve;
      signal.addEventListener("abort", () => {
        process.stdout.write(`aborted ${signal.reason?.reason ?? "unknown"}\n`);
        reject(signal.reason);
      });
    });
    return { by: workerId };
  },
});
worker.start();
