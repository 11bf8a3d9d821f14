/**
 * The owner records of a Declaration: per owning assignment, what was rendered for it (the module version, and the
 * generation since which its resources are unchanged), kept in an annotation written in the same update as the
 * resources it describes (render-declaration.ts).
 */
import { deepFreeze } from '../meta/frozen.ts';
import type { KubeObject } from '../meta/types.ts';

/** The Declaration annotation recording, per owning assignment, what was rendered for it (JSON OwnerRecords). */
export const OWNERS_ANNOTATION = 'meshctl.dev/owners';

/** What was rendered for one assignment: the module version, and the generation since which its resources are unchanged. */
export interface OwnerRecord {
  version: string;
  generation: number;
}

/** Owner records by assignment name. */
export type OwnerRecords = Record<string, OwnerRecord>;

/**
 * The records read from each stored Declaration's annotations: a node's Declaration is rendered several times
 * per change (by the Declaration and the Assignment controllers), from the same cached object. Only frozen
 * annotations are remembered (a stored or cached object's: they cannot change).
 */
const recordsRead = new WeakMap<object, Readonly<OwnerRecords>>();

/** The owner records of a Declaration (empty when the annotation is missing or unreadable). Do not change them. */
export function readOwnerRecords(decl: KubeObject | undefined): Readonly<OwnerRecords> {
  const annotations = decl?.metadata.annotations;
  if (!annotations || !Object.isFrozen(annotations)) return parseOwnerRecords(annotations?.[OWNERS_ANNOTATION]);
  let records = recordsRead.get(annotations);
  if (!records) recordsRead.set(annotations, (records = deepFreeze(parseOwnerRecords(annotations[OWNERS_ANNOTATION]))));
  return records;
}

function parseOwnerRecords(raw: string | undefined): OwnerRecords {
  if (!raw) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    const out: OwnerRecords = {};
    for (const [owner, rec] of Object.entries(parsed as Record<string, Partial<OwnerRecord>>)) {
      if (typeof rec?.version === 'string' && typeof rec.generation === 'number')
        out[owner] = { version: rec.version, generation: rec.generation };
    }
    return out;
  } catch {
    return {};
  }
}

/** Owner records as the annotation value: JSON with owners sorted by name, so equal records give equal text. */
export function formatOwnerRecords(records: OwnerRecords): string {
  const sorted: OwnerRecords = {};
  for (const owner of Object.keys(records).sort()) sorted[owner] = records[owner]!;
  return JSON.stringify(sorted);
}
