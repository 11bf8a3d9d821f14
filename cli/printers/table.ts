/**
 * The table printer of `get`: NAME, the kind's print columns (priority > 0 only with `-o wide`) and AGE (for
 * an Event, since it last happened: KindInfo.ageFrom), aligned like kubectl's tabwriter (three spaces between columns).
 */
import type { KubeObject, Table } from '../../api/meta/types.ts';
import { ageTimestamp, type KindInfo, type PrintColumn } from '../../api/v1alpha1/kind-info.ts';
import { evalJsonPath } from '../../api/v1alpha1/json-path.ts';
import { age } from './age.ts';

/** Options of one table. */
export interface TableOptions {
  wide?: boolean;
  showLabels?: boolean;
  /** Print `node/a` in the NAME column (for `get all` and lists of several kinds). */
  kindPrefix?: boolean;
  /** The time ages are computed against (tests pin it). */
  now?: number;
}

const GAP = 3;

/** The header cells for a kind. */
export function tableHeader(kind: KindInfo, opts: TableOptions = {}): string[] {
  const cols = visibleColumns(kind, opts).map((c) => c.name.toUpperCase());
  return ['NAME', ...cols, 'AGE', ...(opts.showLabels ? ['LABELS'] : [])];
}

/** The cells of one object's row. */
export function tableRow(kind: KindInfo, obj: KubeObject, opts: TableOptions = {}): string[] {
  const name = opts.kindPrefix ? `${kind.singular}/${obj.metadata?.name ?? ''}` : (obj.metadata?.name ?? '');
  const cells = visibleColumns(kind, opts).map((c) => formatCell(evalJsonPath(obj, c.jsonPath), c, opts.now));
  const row = [name, ...cells, age(ageTimestamp(kind, obj), opts.now)];
  if (opts.showLabels) row.push(formatLabels(obj.metadata?.labels));
  return row;
}

/** Renders a whole table (header plus one row per object) as text ending in a newline. */
export function renderTable(kind: KindInfo, objects: KubeObject[], opts: TableOptions = {}): string {
  const rows = [tableHeader(kind, opts), ...objects.map((o) => tableRow(kind, o, opts))];
  return alignRows(rows);
}

/**
 * Renders a Table the server printed (`listTable`) as renderTable would the objects: the server's NAME, columns and
 * AGE (priority > 0 only with `-o wide`), absent cells empty, LABELS from the rows' metadata.
 */
export function renderServerTable(kind: KindInfo, table: Table, opts: TableOptions = {}): string {
  const shown = table.columnDefinitions.flatMap((c, i) => (opts.wide || !c.priority ? [i] : []));
  const header = shown.map((i) => table.columnDefinitions[i].name.toUpperCase());
  const rows = table.rows.map((r) => {
    const cells = shown.map((i) => (r.cells[i] === null || r.cells[i] === undefined ? '' : String(r.cells[i])));
    if (opts.kindPrefix) cells[0] = `${kind.singular}/${cells[0]}`;
    if (opts.showLabels) cells.push(formatLabels(r.object?.metadata?.labels));
    return cells;
  });
  return alignRows([[...header, ...(opts.showLabels ? ['LABELS'] : [])], ...rows]);
}

/** Aligns rows of cells into columns. */
export function alignRows(rows: string[][], widths = columnWidths(rows)): string {
  return rows.map((r) => formatRow(r, widths)).join('');
}

/** The width of each column over all rows. */
export function columnWidths(rows: string[][]): number[] {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  return widths;
}

/** One aligned line (trailing spaces trimmed, newline added). */
export function formatRow(row: string[], widths: number[]): string {
  const line = row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + GAP))).join('');
  return line.trimEnd() + '\n';
}

function visibleColumns(kind: KindInfo, opts: TableOptions): PrintColumn[] {
  return kind.columns.filter((c) => opts.wide || !c.priority);
}

/** Formats a column value: dates as ages, lists joined with commas, missing values empty (as kubectl prints them). */
export function formatCell(value: unknown, col: Pick<PrintColumn, 'type'>, now?: number): string {
  const v = Array.isArray(value) && value.length === 1 ? value[0] : value;
  if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) return '';
  if (col.type === 'date') return age(v, now);
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** `a=b,c=d`, or `<none>`. */
export function formatLabels(labels: Record<string, string> | undefined): string {
  const entries = Object.entries(labels ?? {});
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(',') : '<none>';
}
