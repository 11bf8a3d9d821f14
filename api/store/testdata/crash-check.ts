/**
 * The check the crash tests share: after a crash and a reopen, the store holds every acknowledged write —
 * for each object, the state of its last acknowledged write, or of the one write that was in flight for it
 * when the crash came (an unacknowledged write may or may not have landed). The writers report on lines:
 *   op <plural> <name> <create|update|delete> <tag>          a write is about to be issued
 *   ack <plural> <name> <rv> <create|update|delete> <tag>    that write was acknowledged (durable)
 */
import assert from 'node:assert/strict';
import type { AnyKindStore } from './helpers.ts';

interface Write {
  op: string;
  tag: string;
  rv?: number;
}
/** What an object looked like after the previous round: present (rv, tag) or absent. */
export interface Known {
  present: boolean;
  rv?: number;
  tag?: string;
}

/** Per object: the last acknowledged write of the round and the write in flight after it, if any. */
function parse(lines: string[]): Map<string, { acked?: Write; inflight?: Write }> {
  const keys = new Map<string, { acked?: Write; inflight?: Write }>();
  for (const line of lines) {
    const [what, plural, name, ...rest] = line.split(' ');
    if (what !== 'op' && what !== 'ack') continue;
    const key = `${plural}/${name}`;
    const k = keys.get(key) ?? {};
    if (what === 'op') k.inflight = { op: rest[0], tag: rest[1] };
    else {
      assert.equal(k.inflight?.tag, rest[2], `ack without op: ${line}`);
      k.acked = { op: rest[1], tag: rest[2], rv: Number(rest[0]) };
      k.inflight = undefined;
    }
    keys.set(key, k);
  }
  return keys;
}

function expectations(before: Known | undefined, acked?: Write, inflight?: Write): string[] {
  const base = acked
    ? acked.op === 'delete'
      ? 'absent'
      : `present ${acked.tag} rv>=${acked.rv}`
    : before?.present
      ? `present ${before.tag} rv>=${before.rv}`
      : 'absent';
  if (!inflight) return [base];
  return [base, inflight.op === 'delete' ? 'absent' : `present ${inflight.tag}`];
}

function satisfies(actual: Known, expected: string): boolean {
  const [state, tag, rv] = expected.split(' ');
  if (state === 'absent') return !actual.present;
  if (!actual.present || actual.tag !== tag) return false;
  return rv === undefined || (actual.rv as number) >= Number(rv.slice(4));
}

/**
 * Checks a reopened store against what the previous round left (`known`) and the round's lines; returns the
 * objects as they are now (the next round's `known`) and how many acknowledged writes were checked.
 */
export function checkReopened(
  store: AnyKindStore,
  known: Map<string, Known>,
  lines: string[],
  round: number,
  plurals: string[],
): { next: Map<string, Known>; acks: number } {
  const writes = parse(lines);
  const next = new Map<string, Known>();
  for (const plural of plurals) {
    for (const o of store.list(plural).items) {
      next.set(`${plural}/${o.metadata.name}`, {
        present: true,
        rv: Number(o.metadata.resourceVersion),
        tag: (o.spec as { tag: string }).tag,
      });
    }
  }
  let acks = 0;
  for (const key of new Set([...known.keys(), ...writes.keys(), ...next.keys()])) {
    const w = writes.get(key);
    if (w?.acked) acks++;
    const actual = next.get(key) ?? { present: false };
    const ok = expectations(known.get(key), w?.acked, w?.inflight);
    assert.ok(
      ok.some((e) => satisfies(actual, e)),
      `round ${round}: ${key} is ${JSON.stringify(actual)}, expected one of ${ok.join(' | ')}`,
    );
  }
  const maxAcked = Math.max(0, ...[...writes.values()].map((w) => w.acked?.rv ?? 0));
  assert.ok(Number(store.resourceVersion()) >= maxAcked, `round ${round}: the store's resourceVersion went back`);
  return { next, acks };
}
