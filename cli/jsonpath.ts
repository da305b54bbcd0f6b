/**
 * kubectl's `-o jsonpath=TEMPLATE`, the part scripts use: text with `{...}` actions, each a path
 * (`.a.b`, `['a']`, `[0]`, `[*]`, `.*`, `..name`), a quoted literal (`{"\n"}`), or `{range PATH}...{end}`.
 * The root is the document `-o json` prints, so `{[*].cluster.name}` reads what `-o json` shows. Several
 * results of one path print space-separated, objects as JSON, as kubectl does.
 */
import { UsageError } from './command.js';

type Node = { text: string } | { path: Step[] } | { range: Step[]; body: Node[] };
type Step = { field: string } | { index: number } | { all: true } | { descend: string };

export function jsonpath(template: string, doc: unknown): string {
  return render(parse(template), doc);
}

function parse(template: string): Node[] {
  const stack: Node[][] = [[]];
  const ranges: Step[][] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open < 0) {
      stack.at(-1)!.push({ text: template.slice(i) });
      break;
    }
    if (open > i) stack.at(-1)!.push({ text: template.slice(i, open) });
    const close = closing(template, open);
    const action = template.slice(open + 1, close).trim();
    i = close + 1;
    if (action === 'end') {
      const body = stack.pop();
      const range = ranges.pop();
      if (!body || !range || stack.length === 0) throw bad(template, '{end} without {range}');
      stack.at(-1)!.push({ range, body });
    } else if (action.startsWith('range ')) {
      ranges.push(steps(action.slice(6).trim(), template));
      stack.push([]);
    } else if (/^"(?:[^"\\]|\\.)*"$/.test(action)) stack.at(-1)!.push({ text: JSON.parse(action) });
    else stack.at(-1)!.push({ path: steps(action, template) });
  }
  if (stack.length !== 1) throw bad(template, '{range} without {end}');
  return stack[0]!;
}

/** The `}` closing the action at `open`, past any quoted literal inside it. */
function closing(template: string, open: number): number {
  let quoted = false;
  for (let i = open + 1; i < template.length; i++) {
    const c = template[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === '}' && !quoted) return i;
  }
  throw bad(template, `"{" at ${open + 1} is never closed`);
}

function steps(path: string, template: string): Step[] {
  const out: Step[] = [];
  const rest = path.replace(/^[$@]/, '');
  const re = /\.\.([\w-]+)|\.([\w-]+)|\.\*|\[\*\]|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]|\./gy;
  let at = 0;
  while (at < rest.length) {
    const m = re.exec(rest);
    if (!m) break;
    at = re.lastIndex;
    if (m[1]) out.push({ descend: m[1] });
    else if (m[2] !== undefined) out.push({ field: m[2] });
    else if (m[0] === '.*' || m[0] === '[*]') out.push({ all: true });
    else if (m[3] !== undefined) out.push({ index: Number(m[3]) });
    else if (m[4] !== undefined || m[5] !== undefined) out.push({ field: (m[4] ?? m[5])! });
  }
  if (at !== rest.length) throw bad(template, `cannot read the path "${path}" from "${rest.slice(at)}" on`);
  return out;
}

function bad(template: string, why: string): UsageError {
  return new UsageError(`-o jsonpath=${template}: ${why}`);
}

function select(steps: Step[], from: unknown): unknown[] {
  let values = [from];
  for (const s of steps) values = values.flatMap((v) => step(s, v));
  return values;
}

function step(s: Step, v: unknown): unknown[] {
  if (v === null || typeof v !== 'object') return [];
  if ('field' in s) return s.field in v ? [(v as Record<string, unknown>)[s.field]] : [];
  if ('index' in s) return Array.isArray(v) && s.index < v.length ? [v[s.index]] : [];
  if ('all' in s) return Object.values(v);
  const here = s.descend in v ? [(v as Record<string, unknown>)[s.descend]] : [];
  return [...here, ...Object.values(v).flatMap((c) => step(s, c))];
}

/** Renders `nodes` at `at`: the document, or inside a range the current item (as kubectl reads `.x`). */
function render(nodes: Node[], at: unknown): string {
  let out = '';
  for (const n of nodes) {
    if ('text' in n) out += n.text;
    else if ('path' in n) out += select(n.path, at).map(text).join(' ');
    else {
      const found = select(n.range, at);
      const items = found.length === 1 && Array.isArray(found[0]) ? found[0] : found;
      for (const item of items) out += render(n.body, item);
    }
  }
  return out;
}

function text(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}
