/** Pieces every CustomResourceDefinition manifest here is built from. */

const str = { type: 'string' };

/** apiVersion, kind and metadata: the properties every object schema starts with. */
export const OBJECT_META = { apiVersion: str, kind: str, metadata: { type: 'object' } };

/** A CRD version that is served and stored, its schema an object of these properties (after OBJECT_META). */
export function storedVersion(name: string, properties: Record<string, unknown>): Record<string, unknown> {
  return {
    name,
    served: true,
    storage: true,
    schema: { openAPIV3Schema: { type: 'object', properties: { ...OBJECT_META, ...properties } } },
  };
}
