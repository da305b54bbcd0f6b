/**
 * A minimal OpenAPI v3 surface: the root index and one document per group-version listing the
 * resource paths with their operations and query parameters. kubectl reads it to learn that the
 * server validates fields itself (the `fieldValidation` parameter on PATCH) before create/apply;
 * schemas are not published, so clients validate on the server side.
 */
import { createHash } from 'node:crypto';
import type { JsonObject } from './json.js';
import type { ResourceDef } from './registry.js';

const param = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
const WRITE_PARAMS = [param('dryRun'), param('fieldManager'), param('fieldValidation'), param('pretty')];

function prefixOf(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/** /openapi/v3: the group-versions served, each with a content hash for client caches. */
export function openApiRoot(resources: ResourceDef[]): JsonObject {
  const paths: JsonObject = {};
  const gvs = new Set<string>();
  for (const r of resources) for (const v of r.versions) gvs.add(prefixOf(r.group, v));
  for (const gv of [...gvs].sort()) {
    const [group, version] = gv.startsWith('api/')
      ? ['', gv.slice(4)]
      : (gv.slice(5).split('/') as [string, string]);
    const gvDoc = openApiGroupVersion(resources, group, version);
    if (!gvDoc) continue;
    const doc = JSON.stringify(gvDoc);
    const hash = createHash('sha512').update(doc).digest('hex').slice(0, 128).toUpperCase();
    paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${hash}` };
  }
  return { paths };
}

/** /openapi/v3/<prefix>/<group>/<version>, or undefined when the group-version is not served. */
export function openApiGroupVersion(
  resources: ResourceDef[],
  group: string,
  version: string,
  schemas: JsonObject = {},
): JsonObject | undefined {
  const rs = resources.filter((r) => r.group === group && r.versions.includes(version) && !r.virtual);
  if (rs.length === 0) return undefined;
  const paths: JsonObject = {};
  const base = `/${prefixOf(group, version)}`;
  for (const r of rs) {
    const gvk = { group, version, kind: r.kind };
    const op = (action: string, verb: string) => ({
      description: `${verb} ${r.kind}`,
      operationId: `${verb}${r.kind}`,
      parameters: ['post', 'put', 'patch'].includes(action) ? WRITE_PARAMS : [],
      responses: { '200': { description: 'OK' } },
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': gvk,
    });
    const collection = r.namespaced
      ? `${base}/namespaces/{namespace}/${r.resource}`
      : `${base}/${r.resource}`;
    const item = `${collection}/{name}`;
    if (r.verbs.includes('list') || r.verbs.includes('create'))
      paths[collection] = {
        ...(r.verbs.includes('list') ? { get: op('list', 'list') } : {}),
        ...(r.verbs.includes('create') ? { post: op('post', 'create') } : {}),
      };
    if (r.verbs.includes('get'))
      paths[item] = {
        get: op('get', 'read'),
        ...(r.verbs.includes('update') ? { put: op('put', 'replace') } : {}),
        ...(r.verbs.includes('patch') ? { patch: op('patch', 'patch') } : {}),
        ...(r.verbs.includes('delete') ? { delete: op('delete', 'delete') } : {}),
      };
    for (const s of r.subresources) {
      if (!s.verbs.includes('patch')) continue;
      paths[`${item}/${s.name}`] = {
        get: op('get', 'read'),
        put: op('put', 'replace'),
        patch: op('patch', 'patch'),
      };
    }
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'unversioned' },
    paths,
    components: { schemas },
  };
}
