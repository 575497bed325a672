import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import ts from "typescript";
import { ROOT, rel } from "./markdown.js";

// The manual's JavaScript and TypeScript examples, compiled as the user would compile them: each
// block is saved as a module of its own and the TypeScript compiler checks them all in one program,
// with `finality` and its subpaths mapped to src/ (so no build is needed and the types are the
// package's own). A reader copies a block as it is, so a block that does not compile is a bug.

/** The languages checked: a ```js block is checked as JavaScript (checkJs), a ```ts one as TypeScript. */
const LANGUAGES: Record<string, "js" | "ts"> = { js: "js", javascript: "js", ts: "ts", typescript: "ts" };

/** An HTML comment on the line before a block that opts it out; it must say why after the colon. */
export const FRAGMENT_MARK = /^<!--\s*fragment:\s*(\S.*?)\s*-->$/;

export interface CodeBlock {
  file: string;
  /** The line of the opening fence (1-based), so a failure names where to look. */
  line: number;
  language: "js" | "ts";
  code: string;
  /** The reason given by a `<!-- fragment: why -->` before it, or null when it is checked. */
  fragment: string | null;
  /** The comment just before the fence (any), e.g. `<!-- runnable ... -->`. */
  marker: string | null;
}

export function codeBlocks(file: string, markdown: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w+)\s*$/.exec(lines[i] ?? "");
    if (!open) {
      if (lines[i]?.startsWith("```")) i = closingFence(lines, i);
      continue;
    }
    const end = closingFence(lines, i);
    const language = LANGUAGES[open[1] ?? ""];
    if (language) {
      const before = (lines[i - 1] ?? "").trim();
      const marker = before.startsWith("<!--") ? before : null;
      const fragment = marker ? (FRAGMENT_MARK.exec(marker)?.[1] ?? null) : null;
      blocks.push({
        file,
        line: i + 1,
        language,
        code: lines.slice(i + 1, end).join("\n"),
        fragment,
        marker,
      });
    }
    i = end;
  }
  return blocks;
}

function closingFence(lines: string[], open: number): number {
  for (let j = open + 1; j < lines.length; j++) if (lines[j]?.startsWith("```")) return j;
  return lines.length;
}

/** `finality`, `finality/client`, ... → the src/ file behind each entry of package.json `exports`. */
export function entryPaths(): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, { types: string }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [entry, target] of Object.entries(pkg.exports)) {
    const name = entry === "." ? pkg.name : `${pkg.name}/${entry.slice(2)}`;
    paths[name] = [target.types.replace(/^\.\/dist\//, "./src/").replace(/\.d\.ts$/, ".ts")];
  }
  return paths;
}

export interface BlockFailure {
  where: string;
  message: string;
}

/**
 * Type-checks every block (fragments aside) in one compiler program and answers each error as
 * `README.md:72 (block line 3): message`. The blocks are written under `.tmp/` in the checkout so
 * that their other imports (better-sqlite3, openai) resolve from its node_modules.
 */
export function checkBlocks(blocks: CodeBlock[]): BlockFailure[] {
  const dir = join(ROOT, ".tmp", `code-blocks-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  const byFile = new Map<string, CodeBlock>();
  try {
    for (const block of blocks.filter((b) => b.fragment === null)) {
      const name = `${rel(block.file).replace(/[/.]/g, "_")}_${block.line}.${block.language === "js" ? "mjs" : "mts"}`;
      const path = join(dir, name);
      mkdirSync(dirname(path), { recursive: true });
      // `export {}` makes a block without imports a module too, so top-level await is allowed.
      writeFileSync(path, `${block.code}\nexport {};\n`);
      byFile.set(path, block);
    }
    const program = ts.createProgram([...byFile.keys()], {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ["lib.es2023.d.ts", "lib.es2024.string.d.ts"],
      types: ["node"],
      strict: true,
      allowJs: true,
      checkJs: true,
      noEmit: true,
      skipLibCheck: true,
      esModuleInterop: true,
      baseUrl: ROOT,
      paths: entryPaths(),
      jsx: ts.JsxEmit.ReactJSX,
      jsxImportSource: "hono/jsx",
    });
    const failures: BlockFailure[] = [];
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const block = diagnostic.file ? byFile.get(diagnostic.file.fileName) : undefined;
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
      if (!block || !diagnostic.file || diagnostic.start === undefined) {
        failures.push({ where: diagnostic.file ? rel(diagnostic.file.fileName) : "(program)", message });
        continue;
      }
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      failures.push({ where: `${rel(block.file)}:${block.line + 1 + line}`, message });
    }
    return failures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
