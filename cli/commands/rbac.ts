/**
 * `fleetscope rbac`: prints the least-privilege RBAC that fleetscope's identity needs in a cluster for
 * the capabilities enabled, from what each capability declares (shared/<capability>/capability.ts).
 */
import { parseArgs } from 'node:util';
import { Document, isMap, isSeq } from 'yaml';
import { CAPABILITIES } from '../../shared/capabilities.js';
import {
  knownFeatures,
  type RbacManifest,
  type RbacSubject,
  rbacManifests,
  withRequired,
} from '../../shared/platform/rbac-manifests.js';
import { type CliCommand, UsageError } from '../command.js';

const CORE = 'fleet';

const usage = `usage: fleetscope rbac (--service-account NS/NAME | --user NAME | --group NAME)... [options]

Prints the ClusterRoles, Roles and bindings that fleetscope's identity needs in each cluster, and
nothing more: no wildcard, no secrets, write verbs only on what a capability writes. Apply them with
\`kubectl apply -f -\`.

  --service-account NS/NAME  bind a ServiceAccount (its manifest is printed too; the namespace must exist)
  --user NAME                bind a user, e.g. the username of an EKS access entry
  --group NAME               bind a group, e.g. a group of an EKS access entry
  --capability ID            a capability to enable (repeatable; default: all of ${capabilityIds().join(', ')});
                             "${CORE}" (registration) is always included, and so are the capabilities a
                             capability runs with (node scope and balloons run in the cluster cycle)
  --with FEATURE             add the rules of an optional behaviour (${featureList()})
  --without FEATURE          leave out the rules of a behaviour that is on by default
  -o, --output yaml|json     output format (default yaml: documents with a comment on every rule; --json is
                             -o json). Manifests have no table form: -o table|wide are refused`;

function capabilityIds(): string[] {
  return CAPABILITIES.map((c) => c.id);
}

function featureList(): string {
  return [...knownFeatures(CAPABILITIES)]
    .map(([name, on]) => `${name}: ${on ? 'on' : 'off'} by default`)
    .join('; ');
}

function subjects(values: {
  'service-account'?: string[];
  user?: string[];
  group?: string[];
}): RbacSubject[] {
  const out: RbacSubject[] = [];
  for (const sa of values['service-account'] ?? []) {
    const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(sa);
    if (!m) throw new UsageError(`--service-account needs NAMESPACE/NAME, got ${JSON.stringify(sa)}`);
    out.push({ kind: 'ServiceAccount', namespace: m[1] as string, name: m[3] as string });
  }
  for (const name of values.user ?? []) out.push({ kind: 'User', name });
  for (const name of values.group ?? []) out.push({ kind: 'Group', name });
  if (out.length === 0)
    throw new UsageError('name the identity to bind: --service-account NS/NAME, --user NAME or --group NAME');
  return out;
}

function selected(ids: string[] | undefined) {
  const known = capabilityIds();
  for (const id of ids ?? [])
    if (!known.includes(id))
      throw new UsageError(`unknown capability ${JSON.stringify(id)} (known: ${known.join(', ')})`);
  return withRequired(CAPABILITIES, [CORE, ...(ids?.length ? ids : known)]);
}

/** YAML documents, each rule preceded by a comment saying why it is there. */
export function toYaml(manifests: RbacManifest[]): string {
  return manifests
    .map((m) => {
      const doc = new Document(m.object);
      const rules = isMap(doc.contents) ? doc.contents.get('rules', true) : undefined;
      if (isSeq(rules))
        rules.items.forEach((item, i) => {
          const why = m.reasons?.[i];
          if (why && item && typeof item === 'object')
            (item as { commentBefore?: string }).commentBefore = ` ${why}`;
        });
      return doc.toString({ lineWidth: 0 });
    })
    .join('---\n');
}

export const command: CliCommand = {
  name: 'rbac',
  summary: "print the least-privilege RBAC for fleetscope's identity in a cluster",
  usage,
  outputs: { '': 'manifests' },
  async run(args) {
    let parsed: ReturnType<typeof parse>;
    try {
      parsed = parse(args);
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    const { values, positionals } = parsed;
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    if (values.json && values.output && values.output !== 'json')
      throw new UsageError(`--json and -o ${values.output} disagree`);
    const output = values.json ? 'json' : (values.output ?? 'yaml');
    if (output !== 'yaml' && output !== 'json')
      throw new UsageError(`-o ${output}: use one of yaml, json (manifests have no table form)`);
    let manifests: RbacManifest[];
    try {
      manifests = rbacManifests(selected(values.capability), {
        subjects: subjects(values),
        with: values.with,
        without: values.without,
      });
    } catch (err) {
      if (err instanceof UsageError) throw err;
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    if (output === 'json')
      console.log(
        JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests.map((m) => m.object) }, null, 2),
      );
    else console.log(toYaml(manifests).trimEnd());
    return 0;
  },
};

function parse(args: string[]) {
  return parseArgs({
    args,
    strict: true,
    allowPositionals: true,
    options: {
      'service-account': { type: 'string', multiple: true },
      user: { type: 'string', multiple: true },
      group: { type: 'string', multiple: true },
      capability: { type: 'string', multiple: true },
      with: { type: 'string', multiple: true },
      without: { type: 'string', multiple: true },
      output: { type: 'string', short: 'o' },
      json: { type: 'boolean' },
    },
  });
}
