/**
 * The store's in-memory document (what lowdb holds as `db.data`) and the journal's line format.
 *
 * A journal line is one committed store operation:
 *   `{"rv":7,"op":"put","plural":"nodes","name":"a","obj":{...}}`, `{"rv":8,"op":"del","plural":"nodes","name":"a"}`,
 * or, when one operation changed several objects (a cascade), `{"rv":11,"op":"txn","ops":[<record>,...]}` so that
 * the whole operation is replayed or dropped as one line. Two marks change no object: `{"rv":12,"op":"closed"}`
 * (the store was closed cleanly at rv 12) and `{"rv":1048588,"op":"fence"}` (an open after a crash skipped the
 * resourceVersions up to 1048588: index.ts says why).
 */
import type { KubeObject } from '../meta/types.ts';

/** Objects by plural, then by name. Stored objects are immutable: they are replaced, never changed. */
export type Kinds = Map<string, Map<string, KubeObject>>;

/** A staged journal line (without its newline) and the highest resourceVersion it carries. */
export interface JournalEntry {
  rv: number;
  line: string;
}

/**
 * The document lowdb holds (`db.data`): the whole state, plus the journal lines of the operations already
 * applied to it but not yet handed to the journal. `db.write()` persists exactly those (JournalAdapter.write
 * drains `unjournaled`), so after it resolves the journal on disk holds the state `db.data` had when it was called.
 */
export interface StoreData {
  /** The newest resourceVersion issued. */
  rv: number;
  kinds: Kinds;
  /** Journal lines of operations applied to `kinds` but not yet appended to the journal; `db.write()` drains it. */
  unjournaled: JournalEntry[];
}

/** One replayed mutation. */
export interface MutationRecord {
  rv: number;
  op: 'put' | 'del';
  plural: string;
  name: string;
  obj?: KubeObject;
}

/** A mark in the journal that changes no object: a clean close, or the fence of an open after a crash. */
export interface MarkRecord {
  rv: number;
  op: 'closed' | 'fence';
}

/** One replayed journal record. */
export type JournalRecord = MutationRecord | MarkRecord;

/** The journal line of a put, given the object's JSON (serialized once, shared with the watch event). */
export function putLine(rv: number, plural: string, name: string, objJson: string): string {
  return `{"rv":${rv},"op":"put","plural":${JSON.stringify(plural)},"name":${JSON.stringify(name)},"obj":${objJson}}`;
}

/** The journal line of a delete. */
export function delLine(rv: number, plural: string, name: string): string {
  return `{"rv":${rv},"op":"del","plural":${JSON.stringify(plural)},"name":${JSON.stringify(name)}}`;
}

/** The journal line of a mark (see MarkRecord). */
export function markLine(rv: number, op: MarkRecord['op']): string {
  return `{"rv":${rv},"op":"${op}"}`;
}

/** One journal line for several records that must be replayed together. */
export function txnLine(rv: number, lines: string[]): string {
  return `{"rv":${rv},"op":"txn","ops":[${lines.join(',')}]}`;
}

function checkRecord(r: unknown): JournalRecord {
  const rec = r as Partial<MutationRecord> | Partial<MarkRecord>;
  const mark = rec.op === 'closed' || rec.op === 'fence'; // a store closed empty marks rv 0
  if (typeof r !== 'object' || r === null || !Number.isSafeInteger(rec.rv) || (rec.rv as number) < (mark ? 0 : 1)) {
    throw new Error('record without a valid rv');
  }
  if (mark) return rec as MarkRecord;
  if (!('plural' in rec) || typeof rec.plural !== 'string' || typeof rec.name !== 'string')
    throw new Error('record without plural/name');
  if (rec.op === 'del') return rec as JournalRecord;
  if (rec.op !== 'put') throw new Error(`unknown op ${JSON.stringify(rec.op)}`);
  if (typeof rec.obj !== 'object' || rec.obj === null) throw new Error('put record without an object');
  return rec as JournalRecord;
}

/** Parses one journal line into its records; throws an Error saying what is wrong. */
export function parseJournalLine(text: string): JournalRecord[] {
  const v = JSON.parse(text) as { op?: unknown; ops?: unknown };
  if (v !== null && typeof v === 'object' && v.op === 'txn') {
    if (!Array.isArray(v.ops) || v.ops.length === 0) throw new Error('txn record without ops');
    return v.ops.map(checkRecord);
  }
  return [checkRecord(v)];
}

/** Whether a record is a mark (changes no object). */
export function isMark(rec: JournalRecord): rec is MarkRecord {
  return rec.op === 'closed' || rec.op === 'fence';
}

/** Applies a record to the state (replay). */
export function applyRecord(kinds: Kinds, rec: JournalRecord): void {
  if (isMark(rec)) return;
  let kind = kinds.get(rec.plural);
  if (rec.op === 'put') {
    if (!kind) kinds.set(rec.plural, (kind = new Map()));
    kind.set(rec.name, rec.obj as KubeObject);
  } else {
    kind?.delete(rec.name);
  }
}

/** A fresh, empty document. */
export function emptyData(): StoreData {
  return { rv: 0, kinds: new Map(), unjournaled: [] };
}
