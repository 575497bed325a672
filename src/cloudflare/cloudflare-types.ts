/**
 * The few Workers runtime types Finality uses, written structurally so the library builds without
 * @cloudflare/workers-types; the runtime's own objects satisfy them.
 */

interface SqlStorageCursor {
  toArray(): Record<string, unknown>[];
  raw(): IterableIterator<unknown[]>;
  readonly columnNames: string[];
}

export interface SqlStorage {
  exec(query: string, ...bindings: unknown[]): SqlStorageCursor;
  /** Bytes the object's database takes. */
  readonly databaseSize: number;
}

export interface DurableObjectStorage {
  readonly sql: SqlStorage;
  /** Rolls back every write of `closure` when it throws (SQLite savepoints under the hood). */
  transaction<T>(closure: () => Promise<T>): Promise<T>;
  transactionSync<T>(closure: () => T): T;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
}

export interface DurableObjectState {
  /** The object's id (equal, as a string, to `idFromName` of its name). */
  readonly id?: { toString(): string };
  readonly storage: DurableObjectStorage;
  waitUntil(promise: Promise<unknown>): void;
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
}

interface DurableObjectStub {
  fetch(input: Request | string, init?: RequestInit): Promise<Response>;
}

export interface DurableObjectNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): DurableObjectStub;
}

export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

export interface ScheduledController {
  readonly scheduledTime: number;
  readonly cron: string;
}
