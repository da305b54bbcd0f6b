/**
 * A LimitRange or ResourceQuota in the balloon namespace changes balloons from outside: a LimitRange's
 * default limit is injected into every balloon created (the pod then has a limit its inflates cannot
 * pass: 422), its max refuses an inflate above it and its min refuses the floor (no balloon can be
 * created); a quota on cpu or memory requests refuses an inflate past what is left (403), and one on
 * limits refuses every balloon (it has no limits). Each is reported naming the object and what it breaks.
 */

interface LimitRangeSeen {
  metadata?: { name?: string };
  spec?: {
    limits?: { type?: string; default?: object; defaultRequest?: object; max?: object; min?: object }[];
  };
}
interface QuotaSeen {
  metadata?: { name?: string };
  spec?: { hard?: Record<string, string> };
}

const touches = (l: object | undefined) => l !== undefined && ('cpu' in l || 'memory' in l);
const listed = (l: object | undefined) =>
  Object.entries(l ?? {})
    .filter(([k]) => k === 'cpu' || k === 'memory')
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

export function limitRangeProblems(ns: string, items: readonly LimitRangeSeen[]): string[] {
  const out: string[] = [];
  for (const lr of items)
    for (const l of lr.spec?.limits ?? []) {
      if (l.type !== 'Container' && l.type !== 'Pod') continue;
      const what = `LimitRange ${ns}/${lr.metadata?.name} (${l.type})`;
      if (touches(l.default))
        out.push(
          `${what} injects limits (${listed(l.default)}) into new balloons: an inflate past them is refused, so such a balloon is held at the floor`,
        );
      if (touches(l.defaultRequest))
        out.push(`${what} injects default requests (${listed(l.defaultRequest)})`);
      if (touches(l.max)) out.push(`${what} max (${listed(l.max)}) refuses an inflate above it`);
      if (touches(l.min)) out.push(`${what} min (${listed(l.min)}) refuses a balloon at the floor`);
    }
  return out;
}

export function quotaProblems(ns: string, items: readonly QuotaSeen[]): string[] {
  const out: string[] = [];
  for (const q of items) {
    const hard = q.spec?.hard ?? {};
    const what = `ResourceQuota ${ns}/${q.metadata?.name}`;
    const requests = ['cpu', 'memory', 'requests.cpu', 'requests.memory'].filter((k) => k in hard);
    const limits = ['limits.cpu', 'limits.memory'].filter((k) => k in hard);
    if (requests.length)
      out.push(
        `${what} bounds ${requests.map((k) => `${k} ${hard[k]}`).join(', ')}: an inflate past what is left is refused (403)`,
      );
    if (limits.length)
      out.push(`${what} bounds ${limits.join(', ')}: a balloon has no limits, so none can be created`);
  }
  return out;
}
