import { describe, expect, it } from "vitest";
import { isInteractive, printTable, progressBar, styleFor } from "../../src/cli/cli-output.js";

function stream(isTTY: boolean) {
  let text = "";
  return { isTTY, write: (chunk: string) => (text += chunk), text: () => text };
}

describe("colours and progress bars only for a person at a terminal", () => {
  it.each([
    [true, {}, true],
    [true, { NO_COLOR: "1" }, false],
    [true, { NO_COLOR: "" }, true],
    [true, { TERM: "dumb" }, false],
    [false, {}, false],
  ])("a TTY %s with %j: colour %s", (tty, env, colour) => {
    const style = styleFor(stream(tty), env);
    expect(style.colour).toBe(colour);
    expect(style.status("failed").includes("\u001b[31m")).toBe(colour);
  });

  it("draws a progress bar in place on a terminal, and nothing elsewhere", () => {
    const tty = stream(true);
    const bar = progressBar("polling", 4, tty, {});
    bar.update(2);
    bar.update(4);
    bar.finish();
    expect(tty.text()).toContain("\rpolling [###############---------------] 2/4");
    expect(tty.text()).toContain("\rpolling [##############################] 4/4");
    const counter = stream(true);
    progressBar("pruning", 0, counter, {}).update(120);
    expect(counter.text()).toBe("\rpruning 0\rpruning 120");
    const pipe = stream(false);
    const none = progressBar("polling", 4, pipe, {});
    none.update(3);
    none.finish();
    expect(pipe.text()).toBe("");
    expect(isInteractive(pipe, {})).toBe(false);
  });

  it("aligns table columns and measures them before colouring", () => {
    const out = stream(true);
    const style = styleFor(out, {});
    printTable(
      ["A", "STATE"],
      [
        ["long-value", "failed"],
        ["x", "succeeded"],
      ],
      {
        style,
        stream: out,
        paint: (column, cell) => (column === 1 ? style.status(cell) : cell),
      },
    );
    const lines = out.text().split("\n");
    expect(lines[1]).toBe("long-value  \u001b[31mfailed\u001b[0m");
    expect(lines[2]).toBe("x           \u001b[32msucceeded\u001b[0m");
  });
});
