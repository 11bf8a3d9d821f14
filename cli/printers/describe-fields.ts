/**
 * Renders an object's fields the way `kubectl describe` renders custom resources: `Title Case:` keys,
 * values aligned per level, nested maps indented two spaces, lists of maps with a `-` per item, and
 * `conditions` as a table.
 */
import { age } from './age.ts';
import { alignRows } from './table.ts';

type Json = Record<string, unknown>;

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `observedGeneration` → `Observed Generation`; keys that are not plain camelCase (labels) stay as they are. */
export function titleCase(key: string): string {
  if (!/^[a-z][a-zA-Z0-9]*$/.test(key)) return key;
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
  const spaced = words.charAt(0).toUpperCase() + words.slice(1);
  return spaced.replace(/\b(Uid|Url|Ip|Cidr|Dns|Ttl|Tls|Sha256|Ca|Api)\b/g, (w) => w.toUpperCase());
}

/** A scalar as text (`<none>` for null or empty). */
function scalar(v: unknown): string {
  if (v === null || v === undefined || v === '') return '<none>';
  return String(v);
}

/** The column where values start for these keys (`Key:` plus two spaces). */
export function labelWidth(keys: string[]): number {
  return Math.max(0, ...keys.map((k) => titleCase(k).length + 1)) + 2;
}

/** Renders a map's fields at `indent` spaces (values at `width`, default per level); lines have no newlines. */
export function renderFields(map: Json, indent = 0, width?: number): string[] {
  const pad = ' '.repeat(indent);
  const entries = Object.entries(map).filter(([, v]) => v !== undefined);
  width ??= labelWidth(entries.map(([k]) => k));
  const lines: string[] = [];
  for (const [key, value] of entries) {
    const label = `${titleCase(key)}:`;
    if (key === 'conditions' && Array.isArray(value) && value.length && value.every(isMap)) {
      lines.push(`${pad}${label}`, ...conditionsTable(value, indent + 2));
    } else if (isMap(value) && Object.keys(value).length) {
      lines.push(`${pad}${label}`, ...renderFields(value, indent + 2));
    } else if (Array.isArray(value) && value.length) {
      lines.push(`${pad}${label}`, ...renderList(value, indent + 2));
    } else if (typeof value === 'string' && value.includes('\n')) {
      lines.push(
        `${pad}${label}`,
        ...value
          .replace(/\n$/, '')
          .split('\n')
          .map((l) => `${pad}  ${l}`),
      );
    } else {
      const text = Array.isArray(value) || isMap(value) ? '<none>' : scalar(value);
      lines.push(`${pad}${label.padEnd(width)}${text}`);
    }
  }
  return lines;
}

/** A list: scalars one per line, maps as field blocks starting with `- `. */
function renderList(items: unknown[], indent: number): string[] {
  const pad = ' '.repeat(indent);
  const lines: string[] = [];
  for (const item of items) {
    if (isMap(item)) {
      const block = renderFields(item, indent + 2);
      if (block.length) lines.push(`${pad}- ${block[0].slice(indent + 2)}`, ...block.slice(1));
      else lines.push(`${pad}- {}`);
    } else if (Array.isArray(item)) {
      lines.push(`${pad}-`, ...renderList(item, indent + 2));
    } else {
      lines.push(`${pad}${scalar(item)}`);
    }
  }
  return lines;
}

/** Conditions as a table: Type, Status, Reason, Last Transition Time, Message. */
export function conditionsTable(conditions: Json[], indent: number): string[] {
  const rows = [
    ['Type', 'Status', 'Reason', 'LastTransitionTime', 'Message'],
    ['----', '------', '------', '------------------', '-------'],
    ...conditions.map((c) => [c.type, c.status, c.reason, c.lastTransitionTime, c.message].map((v) => scalar(v))),
  ];
  return indentTable(rows, indent);
}

/** One describe Event, as stored (shaped like core/v1 Event). */
export interface EventLike {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  source?: { component?: string; host?: string };
  metadata?: { creationTimestamp?: string };
}

/** When an event last happened (falling back to when it was recorded). */
export function eventTime(e: EventLike): string | undefined {
  return e.lastTimestamp ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;
}

/** The Events section's table: Type, Reason, Age (`3m (x4 over 10m)` for repeats), From, Message. */
export function eventsTable(events: EventLike[], indent: number, now = Date.now()): string[] {
  const rows = [
    ['Type', 'Reason', 'Age', 'From', 'Message'],
    ['----', '------', '----', '----', '-------'],
    ...events.map((e) => {
      const last = age(eventTime(e), now);
      const when =
        (e.count ?? 1) > 1 ? `${last} (x${e.count} over ${age(e.firstTimestamp ?? eventTime(e), now)})` : last;
      const from = [e.source?.component, e.source?.host].filter(Boolean).join(', ');
      return [scalar(e.type), scalar(e.reason), when, from || '<unknown>', e.message ?? ''];
    }),
  ];
  return indentTable(rows, indent);
}

function indentTable(rows: string[][], indent: number): string[] {
  const pad = ' '.repeat(indent);
  return alignRows(rows)
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => pad + l);
}
