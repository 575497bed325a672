export interface ThrowawayPostgres {
  port: number;
  url: string;
  restart(): void;
  stop(): void;
  start(): void;
  log(): string;
  remove(): void;
}
export function throwawayPostgresUnavailable(): string | null;
export function startThrowawayPostgres(): Promise<ThrowawayPostgres>;
