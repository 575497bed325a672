import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface Child {
  /** Resolves with the next line the child prints on stdout. */
  nextLine(): Promise<string>;
  send(line: string): void;
  /** Resolves when the child exits; rejects with its stderr if it failed. */
  exited: Promise<void>;
  kill(): void;
}

/** Runs `node script ...args` and talks to it in lines; no timers, only its own output. */
export function startNodeChild(script: string, args: readonly string[]): Child {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [script, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (data: Buffer) => {
    stderr += data.toString();
  });
  const exited = new Promise<void>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`child exited with ${code ?? signal}: ${stderr}`)),
    );
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async nextLine() {
      const next = await Promise.race([lines.next(), exited.then(() => ({ done: true, value: "" }))]);
      if (next.done) throw new Error(`child ended without output: ${stderr}`);
      return next.value;
    },
    send(line) {
      child.stdin.write(`${line}\n`);
    },
    exited,
    kill() {
      if (child.exitCode === null) child.kill();
    },
  };
}
