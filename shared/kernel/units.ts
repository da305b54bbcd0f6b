/**
 * Types that say what a value is. A Millicores is never confused with Bytes, a NodeName never with a
 * ClusterName: the brands exist only at compile time and cost nothing at run time.
 */
declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

/** CPU in thousandths of a core (Kubernetes "m"). Integer. */
export type Millicores = Brand<number, 'Millicores'>;
/** Memory in bytes. Integer; safe up to 2^53 (8 PiB), far above any node. */
export type Bytes = Brand<number, 'Bytes'>;
/** CPU in cores, as the VPA model keeps it internally (float). */
export type Cores = Brand<number, 'Cores'>;

export type ClusterName = Brand<string, 'ClusterName'>;
export type NodeName = Brand<string, 'NodeName'>;
export type Namespace = Brand<string, 'Namespace'>;

/** Milliseconds since the Unix epoch. */
export type EpochMillis = Brand<number, 'EpochMillis'>;

export const millicores = (n: number): Millicores => n as Millicores;
export const bytes = (n: number): Bytes => n as Bytes;
export const cores = (n: number): Cores => n as Cores;
export const nodeName = (s: string): NodeName => s as NodeName;
export const clusterName = (s: string): ClusterName => s as ClusterName;
