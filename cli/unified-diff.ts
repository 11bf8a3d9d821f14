/**
 * A small unified diff of two texts, line by line (longest common subsequence), with three lines of
 * context — what `diff -u` prints, for `meshctl diff`.
 */

/** One line of an edit script. */
export interface DiffOp {
  op: ' ' | '-' | '+';
  line: string;
}

/** The edit script turning `a` into `b` (a longest common subsequence of lines is kept). */
export function diffLines(a: string[], b: string[]): DiffOp[] {
  const n = a.length;
  const m = b.length;
  // lcs[i][j] = length of the LCS of a[i..] and b[j..]
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const ops: DiffOp[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ op: ' ', line: a[i++] });
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      ops.push({ op: '-', line: a[i++] });
    } else {
      ops.push({ op: '+', line: b[j++] });
    }
  }
  while (i < n) ops.push({ op: '-', line: a[i++] });
  while (j < m) ops.push({ op: '+', line: b[j++] });
  return ops;
}

function splitLines(text: string): string[] {
  if (!text) return [];
  return text.replace(/\n$/, '').split('\n');
}

/** `start,count` of a hunk header (`diff -u` writes `start-1,0` for an empty side). */
function range(start: number, count: number): string {
  if (count === 0) return `${start - 1},0`;
  return count === 1 ? `${start}` : `${start},${count}`;
}

/** The unified diff of two texts with headers, or '' when they are equal. */
export function unifiedDiff(
  from: string,
  to: string,
  opts: { fromFile: string; toFile: string; context?: number },
): string {
  const ops = diffLines(splitLines(from), splitLines(to));
  if (ops.every((o) => o.op === ' ')) return '';
  const context = opts.context ?? 3;
  const out = [`--- ${opts.fromFile}`, `+++ ${opts.toFile}`];
  let k = 0;
  while (k < ops.length) {
    if (ops[k].op === ' ') {
      k++;
      continue;
    }
    // A hunk: from `context` lines before this change to `context` lines after the last change that is
    // at most 2*context unchanged lines away.
    const start = Math.max(0, k - context);
    let end = k;
    for (let e = k; e < ops.length; e++) {
      if (ops[e].op !== ' ') end = e;
      else if (e - end > 2 * context) break;
    }
    const stop = Math.min(ops.length, end + context + 1);
    out.push(hunkHeader(ops, start, stop), ...ops.slice(start, stop).map((o) => o.op + o.line));
    k = stop;
  }
  return out.join('\n') + '\n';
}

function hunkHeader(ops: DiffOp[], start: number, stop: number): string {
  let aLine = 1;
  let bLine = 1;
  for (let i = 0; i < start; i++) {
    if (ops[i].op !== '+') aLine++;
    if (ops[i].op !== '-') bLine++;
  }
  const slice = ops.slice(start, stop);
  const aCount = slice.filter((o) => o.op !== '+').length;
  const bCount = slice.filter((o) => o.op !== '-').length;
  return `@@ -${range(aLine, aCount)} +${range(bLine, bCount)} @@`;
}
