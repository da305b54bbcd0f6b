/**
 * Server-side printing (meta.k8s.io/v1 Table), which kubectl get asks for: the columns of the
 * apiserver's printers for the kinds the simulator serves, additionalPrinterColumns for custom
 * resources, Name/Created At otherwise. Also PartialObjectMetadata(List) for metadata-only clients.
 */
import { rfc3339 } from './clock.js';
import { getPath, type Json, type JsonObject } from './json.js';
import type { ResourceDef } from './registry.js';

interface Column {
  name: string;
  type: string;
  format?: string;
  description: string;
  priority: number;
}

const col = (name: string, type = 'string', priority = 0, format = ''): Column => ({
  name,
  type,
  format,
  description: name === 'Name' ? 'Name must be unique within a namespace.' : name,
  priority,
});

/** duration.HumanDuration, as kubectl's AGE column shows. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 2) return `${days}d`;
  if (hours < 24 * 365 * 8)
    return days % 365 === 0 ? `${Math.floor(days / 365)}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

const age = (obj: Json, now: number): string => {
  const t = Date.parse(obj?.metadata?.creationTimestamp ?? '');
  return Number.isFinite(t) ? humanDuration(now - t) : '<unknown>';
};

function podRow(p: Json, now: number): Json[] {
  const statuses: Json[] = p.status?.containerStatuses ?? [];
  const total = (p.spec?.containers ?? []).length;
  const ready = statuses.filter((s) => s.ready).length;
  let restarts = 0;
  let lastRestart = 0;
  for (const s of statuses) {
    restarts += s.restartCount ?? 0;
    const f = Date.parse(s.lastState?.terminated?.finishedAt ?? '');
    if (Number.isFinite(f) && f > lastRestart) lastRestart = f;
  }
  let reason: string = p.status?.reason ?? p.status?.phase ?? 'Unknown';
  for (const s of statuses) {
    if (s.state?.waiting?.reason) reason = s.state.waiting.reason;
    else if (s.state?.terminated?.reason && p.status?.phase !== 'Running') reason = s.state.terminated.reason;
  }
  if (p.metadata?.deletionTimestamp) reason = 'Terminating';
  const restartCell =
    restarts && lastRestart ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts);
  return [
    p.metadata.name,
    `${ready}/${total}`,
    reason,
    restartCell,
    age(p, now),
    p.status?.podIP ?? '<none>',
    p.spec?.nodeName ?? '<none>',
    p.status?.nominatedNodeName ?? '<none>',
    '<none>',
  ];
}

function nodeRow(n: Json, now: number): Json[] {
  const ready = (n.status?.conditions ?? []).find((c: Json) => c.type === 'Ready');
  let status = ready?.status === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown';
  if (n.spec?.unschedulable) status += ',SchedulingDisabled';
  const roles = Object.keys(n.metadata?.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter((r) => r);
  const addr = (t: string) =>
    (n.status?.addresses ?? []).find((a: Json) => a.type === t)?.address ?? '<none>';
  const info = n.status?.nodeInfo ?? {};
  return [
    n.metadata.name,
    status,
    roles.length ? roles.sort().join(',') : '<none>',
    age(n, now),
    info.kubeletVersion ?? '',
    addr('InternalIP'),
    addr('ExternalIP'),
    info.osImage || '<unknown>',
    info.kernelVersion || '<unknown>',
    info.containerRuntimeVersion || '<unknown>',
  ];
}

function dsRow(d: Json, now: number): Json[] {
  const s = d.status ?? {};
  const sel = Object.entries(d.spec?.template?.spec?.nodeSelector ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const containers: Json[] = d.spec?.template?.spec?.containers ?? [];
  const selector = Object.entries(d.spec?.selector?.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return [
    d.metadata.name,
    s.desiredNumberScheduled ?? 0,
    s.currentNumberScheduled ?? 0,
    s.numberReady ?? 0,
    s.updatedNumberScheduled ?? 0,
    s.numberAvailable ?? 0,
    sel || '<none>',
    age(d, now),
    containers.map((c) => c.name).join(','),
    containers.map((c) => c.image).join(','),
    selector,
  ];
}

interface Printer {
  columns: Column[];
  row: (obj: Json, now: number) => Json[];
}

const PRINTERS: Record<string, Printer> = {
  pods: {
    columns: [
      col('Name', 'string', 0, 'name'),
      col('Ready'),
      col('Status'),
      col('Restarts', 'string'),
      col('Age'),
      col('IP', 'string', 1),
      col('Node', 'string', 1),
      col('Nominated Node', 'string', 1),
      col('Readiness Gates', 'string', 1),
    ],
    row: podRow,
  },
  nodes: {
    columns: [
      col('Name', 'string', 0, 'name'),
      col('Status'),
      col('Roles'),
      col('Age'),
      col('Version'),
      col('Internal-IP', 'string', 1),
      col('External-IP', 'string', 1),
      col('OS-Image', 'string', 1),
      col('Kernel-Version', 'string', 1),
      col('Container-Runtime', 'string', 1),
    ],
    row: nodeRow,
  },
  'daemonsets.apps': {
    columns: [
      col('Name', 'string', 0, 'name'),
      col('Desired', 'integer'),
      col('Current', 'integer'),
      col('Ready', 'integer'),
      col('Up-to-date', 'integer'),
      col('Available', 'integer'),
      col('Node Selector'),
      col('Age'),
      col('Containers', 'string', 1),
      col('Images', 'string', 1),
      col('Selector', 'string', 1),
    ],
    row: dsRow,
  },
  namespaces: {
    columns: [col('Name', 'string', 0, 'name'), col('Status'), col('Age')],
    row: (n, now) => [n.metadata.name, n.status?.phase ?? '', age(n, now)],
  },
  serviceaccounts: {
    columns: [col('Name', 'string', 0, 'name'), col('Secrets', 'integer'), col('Age')],
    row: (s, now) => [s.metadata.name, (s.secrets ?? []).length, age(s, now)],
  },
  // printEvent (pkg/printers/internalversion): kubectl get events' LAST SEEN, TYPE, REASON, OBJECT, MESSAGE.
  events: {
    columns: [
      col('Last Seen'),
      col('Type'),
      col('Reason'),
      col('Object'),
      col('Subobject', 'string', 1),
      col('Source', 'string', 1),
      col('Message'),
      col('First Seen', 'string', 1),
      col('Count', 'string', 1),
      col('Name', 'string', 1, 'name'),
    ],
    row: (e, now) => {
      const since = (t: string | undefined) => (t ? humanDuration(now - Date.parse(t)) : '<unknown>');
      const src = [e.source?.component, e.source?.host].filter(Boolean).join(', ');
      return [
        since(e.lastTimestamp),
        e.type ?? '',
        e.reason ?? '',
        `${String(e.involvedObject?.kind ?? '').toLowerCase()}/${e.involvedObject?.name ?? ''}`,
        e.involvedObject?.fieldPath ?? '',
        src,
        String(e.message ?? '').trim(),
        since(e.firstTimestamp),
        String(e.count ?? 1),
        e.metadata.name,
      ];
    },
  },
  'priorityclasses.scheduling.k8s.io': {
    columns: [
      col('Name', 'string', 0, 'name'),
      col('Value', 'integer'),
      col('Global-Default', 'boolean'),
      col('Age'),
      col('PreemptionPolicy'),
    ],
    row: (p, now) => [
      p.metadata.name,
      p.value,
      p.globalDefault ?? false,
      age(p, now),
      p.preemptionPolicy ?? '',
    ],
  },
};

function columnsFor(def: ResourceDef, version: string): Printer {
  const named = PRINTERS[def.group ? `${def.resource}.${def.group}` : def.resource];
  if (named) return named;
  const custom = def.custom?.versions[version];
  if (custom) {
    const extra: { c: Column; path: string }[] = (custom.columns ?? []).map((c: Json) => ({
      c: {
        name: c.name,
        type: c.type,
        format: c.format ?? '',
        description: c.description ?? '',
        priority: c.priority ?? 0,
      },
      path: c.jsonPath,
    }));
    if (extra.length === 0) extra.push({ c: col('Age', 'date'), path: '.metadata.creationTimestamp' });
    return {
      columns: [col('Name', 'string', 0, 'name'), ...extra.map((e) => e.c)],
      row: (o, now) => [
        o.metadata.name,
        ...extra.map((e) => {
          const v = getPath(o, e.path);
          if (v === undefined) return null;
          // The CRD table convertor shows date columns as an age.
          if (e.c.type === 'date' && typeof v === 'string' && Number.isFinite(Date.parse(v)))
            return humanDuration(now - Date.parse(v));
          return v;
        }),
      ],
    };
  }
  return {
    columns: [col('Name', 'string', 0, 'name'), col('Created At', 'date')],
    row: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? rfc3339(0)],
  };
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function partialObjectMetadata(obj: Json): JsonObject {
  const { managedFields: _m, ...metadata } = obj.metadata ?? {};
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata };
}

export function toTable(
  def: ResourceDef,
  version: string,
  items: Json[],
  listMeta: JsonObject,
  now: number,
  include: IncludeObject = 'Metadata',
): JsonObject {
  const p = columnsFor(def, version);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: p.columns,
    rows: items.map((o) => {
      const row: JsonObject = { cells: p.row(o, now) };
      if (include === 'Metadata') row.object = partialObjectMetadata(o);
      else if (include === 'Object') row.object = o;
      return row;
    }),
  };
}

/** What an Accept header asks for: a Table, metadata only, or plain JSON. */
export function acceptedAs(
  accept: string | undefined,
): 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList' | 'json' | 'unsupported' {
  if (!accept) return 'json';
  let sawJson = false;
  for (const part of accept.split(',')) {
    const p = part.replace(/\s/g, '');
    const as = /;as=([A-Za-z]+)/.exec(p)?.[1];
    const media = p.split(';')[0];
    if (media !== 'application/json' && media !== '*/*' && media !== 'application/*') continue;
    if (!as) {
      sawJson = true;
      continue;
    }
    if (as === 'Table' && /g=meta\.k8s\.io/.test(p)) return 'Table';
    if ((as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') && /g=meta\.k8s\.io/.test(p))
      return as;
  }
  if (sawJson) return 'json';
  return accept.includes('application/vnd.kubernetes.protobuf') || accept.includes('yaml')
    ? 'unsupported'
    : 'json';
}
