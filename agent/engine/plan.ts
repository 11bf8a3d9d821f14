/**
 * The planner: a PURE function of the desired resources, the owned inventory and the observed world
 * that says what applying would do (it also serves dry-run). Declared resources come first, in
 * declaration order; then removals of owned objects no longer declared, in reverse creation order.
 * Nothing is planned against an object the inventory does not own: that is a `conflict`. A declared
 * step carries its `dependsOn` for the apply to honour; a dependency that is not declared earlier in
 * the list (admission refuses it, but a store may predate that) makes the step fail without applying.
 */
import type { DeclaredResource } from '../../api/v1alpha1/generated/declaration.ts';
import type { Change, DriverRegistry, InventoryEntry, Observed, Step } from './types.ts';

/** What the planner reads. `observed` holds one observation per declared resource id. */
export interface PlanInput {
  desired: readonly DeclaredResource[];
  inventory: readonly InventoryEntry[];
  observed: ReadonlyMap<string, Observed>;
  drivers: DriverRegistry;
}

interface Scratch {
  input: PlanInput;
  owned: Map<string, InventoryEntry>;
  /** Owned entries no longer declared, by world key: a new id at the same key takes them over. */
  leftByKey: Map<string, InventoryEntry>;
  claimed: Map<string, string>;
  seen: Set<string>;
  /** Old id → the declared id that took over its world object. */
  taken: Map<string, string>;
  /** Declared id → its place in the list (first occurrence). */
  position: Map<string, number>;
}

function keyOf(
  drivers: DriverRegistry,
  e: { kind: DeclaredResource['kind']; spec: object; id: string },
): string | undefined {
  try {
    return drivers[e.kind]?.key(e.spec, e.id);
  } catch {
    return undefined;
  }
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Plans `desired` against the inventory and the observed world (see the module comment). */
export function plan(input: PlanInput): Step[] {
  const desiredIds = new Set(input.desired.map((r) => r.id));
  const position = new Map<string, number>();
  input.desired.forEach((r, i) => {
    if (!position.has(r.id)) position.set(r.id, i);
  });
  const s: Scratch = {
    input,
    owned: new Map(input.inventory.map((e) => [e.id, e])),
    leftByKey: new Map(),
    claimed: new Map(),
    seen: new Set(),
    taken: new Map(),
    position,
  };
  for (const e of input.inventory) {
    const key = desiredIds.has(e.id) ? undefined : keyOf(input.drivers, e);
    if (key !== undefined) s.leftByKey.set(key, e);
  }
  const steps = input.desired.map((r, i) => stepFor(s, r, i));
  return [...steps, ...removals(s, desiredIds, steps)];
}

function stepFor(s: Scratch, r: DeclaredResource, at: number): Step {
  const base = { id: r.id, kind: r.kind, owner: r.owner, ...(r.dependsOn?.length ? { dependsOn: r.dependsOn } : {}) };
  const conflict = (msg: string): Step => ({ ...base, action: 'conflict', message: msg });
  if (s.seen.has(r.id)) return conflict(`resource id ${r.id} is declared more than once`);
  s.seen.add(r.id);
  let entry = s.owned.get(r.id);
  if (entry && entry.kind !== r.kind)
    return conflict(`id ${r.id} is owned as a ${entry.kind}; a resource cannot change kind (use a new id)`);
  const driver = s.input.drivers[r.kind];
  const failing = (error: string, waiting?: boolean): Step => ({
    ...base,
    action: entry ? 'update' : 'create',
    error,
    message: error,
    ...(waiting ? { waiting } : {}),
  });
  if (!driver) return failing(`no driver for kind ${r.kind}`);
  const key = keyOf(s.input.drivers, r);
  if (key === undefined) return failing(`invalid ${r.kind} spec`);
  const other = s.claimed.get(key);
  if (other !== undefined) return conflict(`${key} is already declared by resource ${other}`);
  s.claimed.set(key, r.id);
  const badDependency = dependencyError(s, r, at);
  if (badDependency !== undefined) return failing(badDependency);
  const obs = s.input.observed.get(r.id);
  if (!obs || obs.error !== undefined) return failing(obs?.error ?? 'not observed', obs?.waiting);
  let changes: Change[];
  try {
    changes = driver.diff(r.spec, obs);
  } catch (e) {
    return failing(message(e));
  }
  const prev = entry ? undefined : s.leftByKey.get(key);
  if (prev && prev.kind === r.kind && !s.taken.has(prev.id)) {
    s.taken.set(prev.id, r.id);
    entry = prev;
  }
  const moved = entry !== undefined && entry.id === r.id && keyOf(s.input.drivers, entry) !== key;
  const ours = entry !== undefined && !moved;
  if (!ours && obs.exists && !driver.owns?.(r.spec, obs))
    return conflict(`${key} already exists and is not owned by this agent`);
  if (!entry && !obs.exists) return { ...base, action: 'create', changes };
  const extra = bookkeeping(r, entry, moved, key, obs.exists);
  const all = [...changes, ...extra];
  if (all.length === 0) return { ...base, action: 'noop' };
  return { ...base, action: 'update', changes: all, ...(entry && entry.id !== r.id ? { replaces: entry.id } : {}) };
}

/** Why `r`'s dependsOn cannot be honoured: a dependency that is not declared before it. */
function dependencyError(s: Scratch, r: DeclaredResource, at: number): string | undefined {
  for (const d of r.dependsOn ?? []) {
    const where = s.position.get(d);
    if (where === undefined) return `depends on ${d}, which is not declared`;
    if (where >= at)
      return `depends on ${d}, which is not declared before it (a dependency must come earlier in the list)`;
  }
  return undefined;
}

/** Changes that concern ownership rather than the world: owner, unconfirmed creation, adoption, moves. */
function bookkeeping(
  r: DeclaredResource,
  entry: InventoryEntry | undefined,
  moved: boolean,
  key: string,
  exists: boolean,
): Change[] {
  if (!entry) return [{ field: 'inventory', message: `${key} exists and was made by this agent: recorded as owned` }];
  const out: Change[] = [];
  if (entry.id !== r.id) out.push({ field: 'id', message: `takes over ${key} from resource ${entry.id}` });
  if (moved) out.push({ field: 'key', message: `moves to ${key}; the old one is removed afterwards` });
  if (entry.owner !== r.owner) out.push({ field: 'owner', message: `owner ${entry.owner} → ${r.owner}` });
  if (entry.pending && exists && !moved) out.push({ field: 'inventory', message: 'creation not yet confirmed' });
  return out;
}

/** Removals in reverse inventory order: undeclared entries, and earlier specs of moved resources. */
function removals(s: Scratch, desiredIds: Set<string>, steps: readonly Step[]): Step[] {
  const moving = new Set(steps.filter((st) => st.changes?.some((c) => c.field === 'key')).map((st) => st.id));
  const out: Step[] = [];
  for (const e of [...s.input.inventory].reverse()) {
    const taker = s.taken.get(e.id);
    const base = { action: 'remove' as const, id: taker ?? e.id, kind: e.kind, owner: e.owner };
    if (!desiredIds.has(e.id) && taker === undefined) out.push({ ...base, spec: e.spec });
    if (moving.has(e.id)) out.push({ ...base, spec: e.spec, superseded: true });
    for (const old of [...(e.superseded ?? [])].reverse()) out.push({ ...base, spec: old, superseded: true });
  }
  return out;
}
