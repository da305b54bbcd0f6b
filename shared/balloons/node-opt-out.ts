/**
 * The cluster calls of the KEP-5836 node opt-out (./opt-out.ts): whether the server knows the field
 * (its OpenAPI v3 for core/v1), a node's list read afresh, and the fenced JSON patch of one node.
 */
import { ClusterAccessError } from '../k8s/errors.js';
import type { RawReader } from '../k8s/raw-reader.js';
import { type JsonPatchOp, type NodeOptOutRead, servesOptOutField } from './opt-out.js';
import type { FieldDetection } from './store.js';

interface NodeWire {
  metadata?: { name?: string; resourceVersion?: string };
  spec?: { podPreemptionPolicy?: { disableResizePreemption?: string[] } };
}

const readOf = (name: string, n: NodeWire): NodeOptOutRead => ({
  name,
  resourceVersion: n.metadata?.resourceVersion ?? '',
  keys: n.spec?.podPreemptionPolicy?.disableResizePreemption ?? [],
});

const nodePath = (name: string) => `/api/v1/nodes/${encodeURIComponent(name)}`;

/** How a node patch was refused, as the step acts on it. */
export type PatchRefusal = 'stale' | 'forbidden' | 'gone';

export class NodeOptOutApi {
  constructor(private readonly reader: RawReader) {}

  /**
   * Whether core/v1's OpenAPI v3 document serves `NodeSpec.podPreemptionPolicy.disableResizePreemption`.
   * The index (small) names the document's URL with its content hash: when it is the `known` one, the
   * answer is too and the document (core/v1's is the largest a server has) is not read again. A server
   * without OpenAPI v3 (before 1.27) or without core/v1 in it does not have the field.
   */
  async fieldServed(known?: FieldDetection): Promise<FieldDetection> {
    try {
      const index = await this.reader.get<{ paths?: Record<string, { serverRelativeURL?: string }> }>(
        'read OpenAPI v3 index',
        '/openapi/v3',
        {},
        { expected: [404] },
      );
      const url = index.paths?.['api/v1']?.serverRelativeURL;
      if (!url) return { document: '', served: false };
      if (known?.document === url) return known;
      const [path, query] = url.split('?');
      const doc = await this.reader.get<unknown>(
        'read core/v1 OpenAPI v3',
        path ?? url,
        Object.fromEntries(new URLSearchParams(query ?? '')),
      );
      return { document: url, served: servesOptOutField(doc) };
    } catch (err) {
      if (err instanceof ClusterAccessError && err.status === 404) return { document: '', served: false };
      throw err;
    }
  }

  /** The node's list as it is now; undefined when the node is gone. */
  async read(name: string): Promise<NodeOptOutRead | undefined> {
    try {
      return readOf(
        name,
        await this.reader.get<NodeWire>('read node', nodePath(name), {}, { expected: [404] }),
      );
    } catch (err) {
      if (err instanceof ClusterAccessError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** One JSON patch of the node; the node as the server stored it, or why it was refused. */
  async patch(name: string, ops: JsonPatchOp[]): Promise<NodeOptOutRead | PatchRefusal> {
    try {
      const out = await this.reader.send<NodeWire>(
        'patch node resize-preemption opt-out',
        'PATCH',
        nodePath(name),
        ops,
        'application/json-patch+json',
        { expected: [403, 404, 409, 422] },
      );
      return readOf(name, out);
    } catch (err) {
      if (!(err instanceof ClusterAccessError)) throw err;
      // A failed `test` (the node changed since it was read) is a 422; a stale resourceVersion a 409.
      if (err.status === 409 || err.status === 422) return 'stale';
      if (err.status === 403) return 'forbidden';
      if (err.status === 404) return 'gone';
      throw err;
    }
  }
}
