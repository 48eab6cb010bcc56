// The page of a search ranked in memory: the best `k` hits kept as they come.

/** A bounded heap keeping the best `k` items by (score desc, id asc). */
export class TopK<T extends { score: number; id: string }> {
  private heap: T[] = [];
  private readonly k: number;
  constructor(k: number) {
    this.k = k;
  }
  /** true when a is worse than b (served after it) */
  private static worse(a: { score: number; id: string }, b: { score: number; id: string }): boolean {
    return a.score < b.score || (a.score === b.score && a.id > b.id);
  }
  /** The lowest score kept once full (-Infinity before): a lower one is never accepted. */
  floor(): number {
    return this.heap.length < this.k
      ? Number.NEGATIVE_INFINITY
      : (this.heap[0]?.score ?? Number.NEGATIVE_INFINITY);
  }
  /** Whether an item of this score and id would be kept (checked before building it). */
  accepts(score: number, id: string): boolean {
    const h = this.heap;
    if (h.length < this.k) return true;
    const worst = h[0];
    return worst !== undefined && (worst.score < score || (worst.score === score && worst.id > id));
  }
  offer(item: T): void {
    const h = this.heap;
    if (h.length < this.k) {
      h.push(item);
      let i = h.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!TopK.worse(h[i]!, h[p]!)) break;
        [h[i], h[p]] = [h[p]!, h[i]!];
        i = p;
      }
      return;
    }
    if (this.k === 0 || !TopK.worse(h[0]!, item)) return;
    h[0] = item;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && TopK.worse(h[l]!, h[m]!)) m = l;
      if (r < h.length && TopK.worse(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
  /** best first */
  sorted(): T[] {
    return [...this.heap].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}
