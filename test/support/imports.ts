/**
 * The project's import graph, read from the sources as text (no compiler): every `import`/`export ...
 * from` and dynamic `import()` of a file, relative ones resolved to repository paths (without the
 * extension), package ones kept as written. The layer and circle tests judge it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

export interface Import {
  /** The importing file, repository-relative, with its extension. */
  from: string;
  /** Repository path without extension for our own modules; the package specifier otherwise. */
  to: string;
  /** A package import (`@aws-sdk/client-s3`), not one of ours. */
  pkg: boolean;
  typeOnly: boolean;
}

export function sources(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((e) => {
    if (e === 'node_modules') return [];
    const p = join(dir, e);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?[^'";]*?from\s+'([^']+)'|import\('([^']+)'\)/g;

export function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const from = relative(ROOT, file);
  const out: Import[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[2] ?? m[3];
    if (!spec || spec.startsWith('node:')) continue;
    const pkg = !spec.startsWith('.');
    const to = pkg ? spec : relative(ROOT, resolve(dirname(file), spec)).replace(/\.js$/, '');
    out.push({ from, to, pkg, typeOnly: Boolean(m[1]) });
  }
  return out;
}

/** The imports of every source under the given top-level folders. */
export function importGraph(dirs: readonly string[]): Import[] {
  return dirs.flatMap((d) => sources(join(ROOT, d))).flatMap(importsOf);
}

/** Repository path without extension of a source file (`shared/a/b.ts` -> `shared/a/b`). */
export const moduleOf = (file: string): string => file.replace(/\.ts$/, '');

/**
 * The import circles: strongly connected components of more than one module (Tarjan), each sorted,
 * type-only imports included (a circle of types still means no file in it stands alone).
 */
export function circles(imports: readonly Import[]): string[][] {
  const edges = new Map<string, string[]>();
  for (const i of imports) {
    if (i.pkg) continue;
    const from = moduleOf(i.from);
    // `./dir/index.js` and `./dir` name one module; a path with no such folder stays as written.
    const to = existsSync(join(ROOT, i.to, 'index.ts')) ? `${i.to}/index` : i.to;
    edges.set(from, [...(edges.get(from) ?? []), to]);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1) found.push(scc.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}
