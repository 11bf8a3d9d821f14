/**
 * Encodes watch events to their wire line once per event and representation, however many watchers
 * receive it: 1,000 watchers of one kind share one JSON.stringify per change. Plain JSON uses the line the
 * store already serialized (`event.json`) when it offers one.
 */
import type { KubeObject, Table } from '../../meta/types.ts';
import type { StoreWatchEvent } from '../../store/types.ts';
import type { KindInfo } from '../../v1alpha1/kind-info.ts';
import type { Representation } from './table.ts';
import { columnDefinitions, tableRow } from './table.ts';

/** Lines already encoded, by event object, then by type and representation. */
const cache = new WeakMap<object, Map<string, string>>();

function repKey(type: string, rep: Representation): string {
  return rep.as === 'json' ? type : `${type}|${rep.apiVersion}|${rep.includeObject}`;
}

/** The wire line (`{"type":…,"object":…}\n`) of one event. */
export function encodeEvent(e: StoreWatchEvent, info: KindInfo, rep: Representation): string {
  const json = (e as { json?: unknown }).json;
  if (typeof json === 'string' && (rep.as === 'json' || e.type === 'ERROR')) return json + '\n';
  const key = repKey(e.type, rep);
  let lines = cache.get(e.object);
  const hit = lines?.get(key);
  if (hit !== undefined) return hit;
  const line = JSON.stringify({ type: e.type, object: wireObject(e, info, rep) }) + '\n';
  if (!lines) cache.set(e.object, (lines = new Map()));
  lines.set(key, line);
  return line;
}

function wireObject(e: StoreWatchEvent, info: KindInfo, rep: Representation): unknown {
  if (rep.as === 'json' || e.type === 'ERROR') return e.object;
  const obj: KubeObject = e.object;
  const rows = e.type === 'BOOKMARK' ? [] : [tableRow(info, obj, rep.includeObject)];
  const table: Table = {
    kind: 'Table',
    apiVersion: rep.apiVersion,
    metadata: { resourceVersion: obj.metadata.resourceVersion ?? '' },
    columnDefinitions: columnDefinitions(info),
    rows,
  };
  return table;
}
