/**
 * Runs `work` over `items` with at most `width` at once; the results in the order of the items. The
 * first rejection rejects the whole (the work already started runs on).
 */
export async function inParallel<T, R>(
  items: T[],
  width: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next;
        next += 1;
        results[i] = await work(items[i]);
      }
    }),
  );
  return results;
}
