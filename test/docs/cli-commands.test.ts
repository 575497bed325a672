import { join } from "node:path";
import { Command } from "commander";
import { describe, expect, it, vi } from "vitest";
import { proseOf, ROOT, read } from "./markdown.js";

/**
 * The program src/cli/main.ts builds, caught as it is about to parse: main.ts builds it at import
 * and parses process.argv at once, so the parse is replaced by a catch. Whatever main.ts adds is
 * what this test sees.
 */
async function finalityProgram(): Promise<Command> {
  let caught: Command | undefined;
  const parse = vi.spyOn(Command.prototype, "parseAsync").mockImplementation(function (this: Command) {
    caught = this;
    return Promise.resolve(this);
  });
  try {
    await import("../../src/cli/main.js");
  } finally {
    parse.mockRestore();
  }
  if (!caught) throw new Error("src/cli/main.ts did not parse a commander program");
  return caught;
}

/** "jobs list", "effects retry", ...: every command a user can type, by its full name. */
function commandNames(command: Command, prefix = ""): string[] {
  return command.commands.flatMap((sub) => {
    const name = prefix === "" ? sub.name() : `${prefix} ${sub.name()}`;
    const children = commandNames(sub, name);
    // A group such as `jobs` is not itself a command unless it has an action of its own.
    return children.length > 0 ? children : [name];
  });
}

/** The code spans in the first column of docs/cli.md's tables: `finality jobs list`, .... */
function documentedCommands(): string[] {
  const spans: string[] = [];
  for (const line of proseOf(read(join(ROOT, "docs/cli.md"))).split("\n")) {
    const firstCell = /^\|([^|]*)\|/.exec(line)?.[1] ?? "";
    for (const code of firstCell.matchAll(/`([^`]+)`/g)) spans.push(code[1] ?? "");
  }
  return spans;
}

describe("docs/cli.md", () => {
  it("has a row for every command of the `finality` program", async () => {
    const names = commandNames(await finalityProgram());
    expect(names).toContain("jobs list");
    const spans = documentedCommands();
    const missing = names.filter(
      (name) => !spans.some((span) => span === `finality ${name}` || span.startsWith(`finality ${name} `)),
    );
    expect(missing, `commands in src/cli/main.ts with no row in docs/cli.md: ${missing.join(", ")}`).toEqual(
      [],
    );
  });
});
