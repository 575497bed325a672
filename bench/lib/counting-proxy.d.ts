/** Types of counting-proxy.js, for the tests that count a store's statements through it. */
export interface ProxyCounts {
  /** Times a client sent after it last heard from the server (a pipelined batch is one). */
  roundTrips: number;
  /** Query ('Q') and Sync ('S') messages: one per statement's exchange. */
  statements: number;
}

export interface CountingProxy {
  /** `url` with its host and port replaced by the proxy's. */
  url(url: string): string;
  start(): void;
  stop(): ProxyCounts;
  close(): Promise<void>;
}

export function countingProxy(target: { host: string; port: number }): Promise<CountingProxy>;
