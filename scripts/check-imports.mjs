// Two checks over the TypeScript sources that the compiler does not make, run by `npm test`:
//
// - an unused export: a name a file under src/ exports that no other file imports, and that no
//   package entry (package.json `exports`) hands to users. Dead code otherwise hides there.
// - an import cycle between files under src/ (type-only imports too: a cycle of types is still
//   two files that cannot be read apart). test/architecture/layers.test.ts checks folders.
//
// A small script over TypeScript's own parser (no type-checking, a few seconds), because the tools
// that do this (knip, madge) are packages Finality does not carry. Imports from test/, bench/ and
// scripts/ count as uses: a helper exported for its test is used. Usage:
//   node scripts/check-imports.mjs [root]    exit 1 and one line per new finding
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const SOURCE = /\.(tsx?|mts|mjs|js)$/;
const USERS = ["src", "test", "bench", "scripts"];

function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : filesUnder(path);
    return SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** `./x.js` from `file`, as the file under src/ it names (dist/ paths map back to src/). */
function resolveSpecifier(root, file, specifier) {
  if (!specifier.startsWith(".")) return null;
  let target = resolve(dirname(file), specifier);
  const dist = `${join(root, "dist")}/`;
  if (target.startsWith(dist)) target = join(root, "src", target.slice(dist.length));
  const base = target.replace(/\.(js|mjs|ts|tsx)$/, "");
  for (const candidate of [`${base}.ts`, `${base}.tsx`, target, `${base}/index.ts`]) {
    if (existsSync(candidate) && !candidate.endsWith("/")) return candidate;
  }
  return null;
}

/** What one file exports, imports (by name or whole) and re-exports. */
function scan(root, file) {
  const text = readFileSync(file, "utf8");
  const kind = file.endsWith(".tsx") ? ts.ScriptKind.TSX : undefined;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const result = { exports: new Set(), imports: [], reexports: [] };
  const edge = (specifier, names, typeOnly) => {
    const target = resolveSpecifier(root, file, specifier);
    if (target !== null) result.imports.push({ target, names, typeOnly });
    return target;
  };
  const exported = (node) =>
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      let names = [];
      if (clause?.name) names.push("default");
      if (bindings && ts.isNamespaceImport(bindings)) names = "*";
      else if (bindings) names.push(...bindings.elements.map((e) => (e.propertyName ?? e.name).text));
      edge(node.moduleSpecifier.text, names, clause?.isTypeOnly === true);
    } else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      if (node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const names =
          clause && ts.isNamedExports(clause)
            ? clause.elements.map((e) => (e.propertyName ?? e.name).text)
            : "*";
        const target = edge(node.moduleSpecifier.text, names, node.isTypeOnly);
        if (target !== null) result.reexports.push({ target, names });
      }
      if (clause && ts.isNamedExports(clause))
        for (const e of clause.elements) result.exports.add(e.name.text);
    } else if (ts.isExportAssignment(node)) {
      result.exports.add("default");
    } else if (exported(node)) {
      const isDefault = (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
      if (isDefault) result.exports.add("default");
      else if (ts.isVariableStatement(node))
        for (const d of node.declarationList.declarations) {
          if (ts.isIdentifier(d.name)) result.exports.add(d.name.text);
        }
      else if (node.name && ts.isIdentifier(node.name)) result.exports.add(node.name.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      // A dynamic import: every export may be read from the module object.
      edge(node.arguments[0].text, "*", false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return result;
}

/** The src/ files behind package.json's entries: their exports are the public API. */
function entryFiles(root) {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const targets = Object.values(manifest.exports ?? {}).map((entry) =>
    typeof entry === "string" ? entry : entry.default,
  );
  if (manifest.bin)
    targets.push(...Object.values(typeof manifest.bin === "string" ? { bin: manifest.bin } : manifest.bin));
  return targets
    .map((target) => resolveSpecifier(root, join(root, "package.json"), `./${target.replace(/^\.\//, "")}`))
    .filter((file) => file !== null);
}

export function checkImports(root) {
  const src = join(root, "src");
  const scanned = new Map();
  for (const file of USERS.flatMap((dir) => filesUnder(join(root, dir)))) scanned.set(file, scan(root, file));
  const srcFiles = [...scanned.keys()].filter((file) => file.startsWith(`${src}/`) && /\.tsx?$/.test(file));

  // Unused exports: mark what is imported, then what the entries expose (following re-exports).
  const used = new Map(srcFiles.map((file) => [file, new Set()]));
  const useAll = new Set();
  for (const [, info] of scanned)
    for (const { target, names } of info.imports) {
      if (names === "*") useAll.add(target);
      else for (const name of names) used.get(target)?.add(name);
    }
  const pending = entryFiles(root).map((file) => ({ file, names: "*" }));
  const exposed = new Set();
  while (pending.length > 0) {
    const { file, names } = pending.pop();
    const key = `${file}\0${names === "*" ? "*" : names.join(",")}`;
    if (exposed.has(key)) continue;
    exposed.add(key);
    if (names === "*") useAll.add(file);
    else for (const name of names) used.get(file)?.add(name);
    for (const re of scanned.get(file)?.reexports ?? []) {
      const passed = re.names === "*" || names === "*" ? re.names : re.names.filter((n) => names.includes(n));
      if (passed === "*" || passed.length > 0) pending.push({ file: re.target, names: passed });
    }
  }
  const findings = [];
  for (const file of srcFiles) {
    if (useAll.has(file)) continue;
    for (const name of scanned.get(file).exports)
      if (!used.get(file).has(name))
        findings.push(
          `unused export: ${relative(root, file)}: ${name} (no file imports it; drop \`export\`, or the code)`,
        );
  }

  // Cycles between src/ files: Tarjan's strongly connected components.
  const graph = new Map(
    srcFiles.map((file) => [
      file,
      [...new Set(scanned.get(file).imports.map((i) => i.target))].filter((t) => used.has(t)),
    ]),
  );
  let index = 0;
  const stack = [];
  const on = new Set();
  const indexOf = new Map();
  const low = new Map();
  const strong = (v) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v)) {
      if (!indexOf.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), indexOf.get(w)));
    }
    if (low.get(v) === indexOf.get(v)) {
      const group = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        group.push(relative(root, w));
      } while (w !== v);
      if (group.length > 1 || graph.get(v).includes(v))
        findings.push(`import cycle: ${group.sort().join(" ↔ ")}`);
    }
  };
  for (const file of srcFiles) if (!indexOf.has(file)) strong(file);
  return findings.sort();
}

/**
 * The findings that were there when the check came in (issue 30), one a line: each is still to be
 * fixed, and the list only shrinks. A new finding fails, and so does a listed one that is gone
 * (remove its line), so the list stays true.
 */
export const KNOWN = "scripts/check-imports.known.txt";

export function compareWithKnown(findings, known) {
  const listed = new Set(known);
  const found = new Set(findings);
  return {
    added: findings.filter((line) => !listed.has(line)),
    gone: known.filter((line) => !found.has(line)),
  };
}

export function readKnown(root) {
  const path = join(root, KNOWN);
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? fileURLToPath(new URL("..", import.meta.url)));
  const findings = checkImports(root);
  const { added, gone } = compareWithKnown(findings, readKnown(root));
  for (const line of added) process.stderr.write(`${line}\n`);
  for (const line of gone) process.stderr.write(`fixed, so remove it from ${KNOWN}: ${line}\n`);
  if (added.length + gone.length > 0) {
    process.stderr.write(`check-imports: ${added.length} new, ${gone.length} fixed but still listed\n`);
    process.exitCode = 1;
  }
}
