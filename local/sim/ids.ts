/**
 * Deterministic identities. Everything the simulator invents (UIDs, generated name suffixes, node
 * factors, noise) derives from a hash of the cluster name, the seed and the object, so a restarted
 * simulator produces the same kube-system UID, node names and pod names.
 */
import { createHash } from 'node:crypto';
import { prng } from '../../shared/kernel/prng.js';

export function sha256(...parts: (string | number)[]): Buffer {
  return createHash('sha256').update(parts.join('\u0000')).digest();
}

/** An RFC 4122 version-4-shaped UUID derived from the parts. */
export function uuidFrom(...parts: (string | number)[]): string {
  const b = sha256('uuid', ...parts);
  b[6] = ((b[6] as number) & 0x0f) | 0x40;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const h = b.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** A UUID-shaped id from a cheap 32-bit mix, for the tens of thousands of objects built at start-up. */
export function uuidFast(a: number, b: number, c: number): string {
  const h = hex32(a, b, c);
  const v = ((Number.parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${v}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function step(h: number, v: number): number {
  let x = h ^ (v >>> 0);
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return x ^ (x >>> 16);
}

/** mix32 for exactly four inputs, without the array a rest parameter allocates. */
function mix4(a: number, b: number, c: number, d: number): number {
  return step(step(step(step(0x9e3779b9, a), b), c), d) >>> 0;
}

/** 32 hex characters derived from three numbers. */
export function hex32(a: number, b: number, c: number): string {
  let s = '';
  for (let i = 0; i < 4; i++) s += mix4(a, b, c, i).toString(16).padStart(8, '0');
  return s;
}

/** 64 hex characters (a container or image digest) derived from three numbers. */
export function hex64(a: number, b: number, c: number): string {
  return hex32(a, b, c) + hex32(c, b, a ^ 0x5bd1e995);
}

/** The alphabet of apimachinery's rand.String (no vowels, no confusable characters). */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** A generateName-style suffix from a cheap hash (start-up objects). */
export function nameSuffixFast(n: number, a: number, b: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHANUMS[mix4(a, b, i, n) % ALPHANUMS.length];
  return s;
}

/** A generateName-style suffix ("x7k2p"). */
export function nameSuffix(n: number, ...parts: (string | number)[]): string {
  const b = sha256('suffix', ...parts);
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHANUMS[(b[i] as number) % ALPHANUMS.length];
  return s;
}

/** 32-bit FNV-1a: a cheap hash for per-sample noise, where sha256 would be wasted work. */
export function fnv1a(str: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Mixes integers into a well-spread 32-bit value (murmur3 finaliser). */
export function mix32(...values: number[]): number {
  let h = 0x9e3779b9;
  for (const v of values) {
    h ^= v >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** A deterministic number in [0, 1). */
export function unit(...values: number[]): number {
  return mix32(...values) / 4294967296;
}

export { prng };
