// Edit distance for typo tolerance: optimal string alignment (Levenshtein plus the swap of two
// neighbouring letters, so `restuarant` is one typo from `restaurant`, as in Meilisearch).

/** Scratch rows, reused (the distance runs over many dictionary words per query). */
let rows: Int32Array[] = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/** The OSA distance of `a` and `b`, or `max + 1` as soon as it must exceed `max`. */
export function editDistance(a: string, b: string, max: number): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (m + 1 > rows[0]!.length) rows = rows.map(() => new Int32Array(m + 1));
  let before = rows[0]!; // row i - 2
  let prev = rows[1]!; // row i - 1
  let cur = rows[2]!;
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let best = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const cb = b.charCodeAt(j - 1);
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ca === cb ? 0 : 1));
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb)
        v = Math.min(v, before[j - 2]! + 1);
      cur[j] = v;
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    [before, prev, cur] = [prev, cur, before];
  }
  return prev[m]! <= max ? prev[m]! : max + 1;
}

/** The typos a word of this length may carry: one from 5 letters, two from 9 (Meilisearch's defaults). */
export function typosAllowed(length: number): number {
  return length >= 9 ? 2 : length >= 5 ? 1 : 0;
}
