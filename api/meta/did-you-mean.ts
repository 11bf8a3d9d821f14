/**
 * "Did you mean …?" for a mistyped name: the edit distance (Levenshtein, with an adjacent transposition
 * counting as one edit) and the closest of the known names. Used for unknown resource types (meshctl) and
 * unknown fields (the server's validation causes).
 */

/** The number of single-character insertions, deletions, substitutions or adjacent swaps turning `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push([i]);
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        rows[0].push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2][j - 2] + 1);
      rows[i].push(d);
    }
  }
  return rows[a.length][b.length];
}

/**
 * The candidate closest to `word` (case-insensitive), if it is close enough to be a typo: at most 2 edits and
 * at most a third of the word's length, rounded up (`nodez` → `nodes`; `xyz` → nothing). Ties go to the
 * earlier candidate.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.min(2, Math.ceil(word.length / 3));
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = editDistance(word.toLowerCase(), name.toLowerCase());
    if (d > 0 && d <= limit && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** `; did you mean "x"?` for the closest candidate, or '' when none is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const name = closest(word, candidates);
  return name === undefined ? '' : `; did you mean ${JSON.stringify(name)}?`;
}
