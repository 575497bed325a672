/**
 * What Finality knows about each provider instance's standing, beyond single jobs. Today: whether
 * the provider refused the configured API key (401/403). That is a configuration error, not a job's
 * problem, so it is reported once per provider (a log line, a counter), kept as a flag that the
 * dashboard can show as a banner, and cleared by the next answer that is not a refusal.
 */
export interface AuthFailure {
  status: number;
  /** Epoch milliseconds of the first refusal since the last good answer. */
  since: number;
  /** Refusals since the last good answer. */
  count: number;
  message: string;
}

export interface ProviderHealth {
  /** Records a 401/403; returns true the first time since the last good answer (report it then). */
  authRefused(provider: string, status: number, message: string): boolean;
  /** Records an answer that was not a refusal; clears the flag. */
  authAccepted(provider: string): void;
  /** Providers whose API key is currently refused. */
  authFailures(): ReadonlyMap<string, AuthFailure>;
  /** Called once per refusal streak, with the provider's name (for a log line or an alert). */
  onAuthFailure(listener: (provider: string, failure: AuthFailure) => void): () => void;
}

export function createProviderHealth(now: () => number = Date.now): ProviderHealth {
  const failures = new Map<string, AuthFailure>();
  const listeners = new Set<(provider: string, failure: AuthFailure) => void>();
  return {
    authRefused(provider, status, message) {
      const current = failures.get(provider);
      if (current !== undefined) {
        current.count++;
        return false;
      }
      const failure = { status, since: now(), count: 1, message };
      failures.set(provider, failure);
      for (const listener of listeners) listener(provider, failure);
      return true;
    },
    authAccepted(provider) {
      if (failures.size > 0) failures.delete(provider);
    },
    authFailures: () => failures,
    onAuthFailure(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * The process's own record. The service's webhook receivers and its reconciler are built apart,
 * and both ask providers for objects, so they share this one unless a caller passes its own.
 */
export const providerHealth: ProviderHealth = createProviderHealth();
