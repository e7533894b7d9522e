/**
 * Runs `work` on every item, at most `width` at once (each worker takes the next item when it is
 * done with one), and returns the results in the items' order; rejects with the first failure.
 */
export async function inParallel<T, R>(
  items: T[],
  width: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const index = next;
        next += 1;
        results[index] = await work(items[index], index);
      }
    }),
  );
  return results;
}
