/**
 * `Promise.all(items.map(fn))` with at most `limit` calls in flight: reading something per cluster of a
 * 1,000-cluster fleet must not queue a thousand requests behind the SDK's 50 sockets at once.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
