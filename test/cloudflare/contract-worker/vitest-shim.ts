// Stands in for "vitest" when the store contract is bundled into a Worker (see bundle.ts): the
// suite registers its tests here, and the Worker runs one by name. `expect` is vitest's own
// (@vitest/expect on chai), so the assertions are the very ones the suite makes on Node.
import {
  chai,
  GLOBAL_EXPECT,
  JestAsymmetricMatchers,
  JestChaiExpect,
  JestExtend,
  setState,
} from "@vitest/expect";

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

export const expect = ((value: unknown, message?: string) =>
  chai.expect(value, message)) as unknown as typeof chai.expect;
Object.assign(expect, chai.expect);
setState(
  { assertionCalls: 0, isExpectingAssertions: false, expectedAssertionsNumber: null },
  expect as never,
);
(globalThis as Record<symbol, unknown>)[GLOBAL_EXPECT] = expect;

type Hook = (context: { task: { name: string } }) => unknown;
type TestFn = () => unknown;

interface Scope {
  prefix: string;
  before: Hook[];
  after: Hook[];
}

export interface RegisteredTest {
  name: string;
  fn: TestFn;
  before: Hook[];
  after: Hook[];
}

export const registered = new Map<string, RegisteredTest>();
let scope: Scope = { prefix: "", before: [], after: [] };

export function describe(name: string, body: () => void): void {
  const outer = scope;
  scope = { prefix: `${outer.prefix}${name} > `, before: [...outer.before], after: [...outer.after] };
  try {
    body();
  } finally {
    scope = outer;
  }
}

export function it(name: string, fn: TestFn): void {
  const full = `${scope.prefix}${name}`;
  if (registered.has(full)) throw new Error(`two tests named "${full}"`);
  registered.set(full, { name: full, fn, before: scope.before, after: scope.after });
}
/** `it.each(rows)("name %s", fn)`: an array row is spread into the arguments, as in vitest. */
it.each =
  (rows: readonly unknown[]) =>
  (name: string, fn: (...args: unknown[]) => unknown): void => {
    for (const row of rows) {
      const args = Array.isArray(row) ? row : [row];
      let next = 0;
      const title = name.replace(/%[sidj]/g, () => String(args[next++]));
      it(title, () => fn(...args));
    }
  };
export const test = it;

export function beforeEach(hook: Hook): void {
  scope.before.push(hook);
}

export function afterEach(hook: Hook): void {
  scope.after.unshift(hook);
}

/** Runs one registered test with its hooks, as vitest would; afterEach hooks run even on failure. */
export async function runRegistered(name: string): Promise<{ ok: true } | { ok: false; error: string }> {
  const test = registered.get(name);
  if (test === undefined) return { ok: false, error: `no test named "${name}"` };
  const context = { task: { name } };
  let failure: unknown = null;
  try {
    for (const hook of test.before) await hook(context);
    await test.fn();
  } catch (error) {
    failure = error;
  }
  for (const hook of test.after) {
    try {
      await hook(context);
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure === null) return { ok: true };
  const error = failure as Error;
  return { ok: false, error: `${error?.message ?? String(failure)}\n${error?.stack ?? ""}` };
}
