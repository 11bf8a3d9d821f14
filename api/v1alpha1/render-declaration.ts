/**
 * Rendering of a node's Declaration from its Assignments and their Modules: pure functions, no I/O.
 *
 * - Assignments of the node are ordered by creationTimestamp, then name; within one, the Module's resources
 *   keep their declared order.
 * - A resource's id is `<assignment>/<module resource id>` and its dependsOn is rewritten the same way. The
 *   `/` cannot occur in an assignment name, so two assignments can never render the same id.
 * - Versions: an assignment without spec.version, or whose version is the module's current one, renders the
 *   module's resources. One pinned to another version keeps what the Declaration already holds for it when
 *   that was rendered at the pinned version. Otherwise it is VersionNotAvailable: what the node already runs
 *   for it stays (a typo in a version must not take a module off its node), and a new one renders nothing.
 * - A new module version is a rollout, as a changed pod template is: every resource rendered for an owner
 *   carries the module version (`version`), and every Service gets it in its env as MODULE_VERSION_ENV. So a
 *   version-only change is a new generation, and the agent's Service driver sees a changed spec and restarts
 *   the service. Each node's Declaration is rendered on its own: all nodes of a module roll at once.
 * - What was rendered per owner (version, and the generation since which its resources are unchanged) is
 *   recorded in the OWNERS_ANNOTATION, written in the same update as the resources it describes.
 * - spec.generation is the renderer's own counter: it goes up by one when the resources change (1 for a new
 *   Declaration) and never otherwise. It is not the metadata.generation, which the store owns and assigns;
 *   owner records use spec.generation too, and the agent reports the spec.generation it holds
 *   (status.receivedGeneration), so the two are compared on one scale without guessing the store's.
 * - The node's Routes render after all assignments (render-routes.ts), owned by `route.<name>`; they have no
 *   owner record.
 * - The node's WireGuard resource (overlay.ts), when it is on the overlay, comes last, owned by no assignment.
 */
import { jsonEqual } from '../meta/json-equal.ts';
import type { OwnerReference } from '../meta/types.ts';
import {
  formatOwnerRecords,
  OWNERS_ANNOTATION,
  readOwnerRecords,
  type OwnerRecord,
  type OwnerRecords,
} from './owner-records.ts';
import { API_VERSION } from '../meta/types.ts';
import { controllerReference } from '../meta/owner-reference.ts';
import type {
  Assignment,
  Declaration,
  DeclarationSpec,
  DeclaredResource,
  Module,
  ModuleResource,
  Node,
} from './generated/index.ts';

/** The env var through which every rendered Service gets its module's version (it also makes the service restart). */
export const MODULE_VERSION_ENV = 'MESHCTL_MODULE_VERSION';

/** The longest host resource id the schema allows. */
const MAX_ID_LENGTH = 253;

/** Why nothing was rendered for an assignment (the Applied condition's reason). */
export type RenderProblemReason = 'ModuleNotFound' | 'VersionNotAvailable' | 'InvalidResourceId';

/** The outcome of rendering one assignment. */
export interface OwnerOutcome {
  /** The assignment's name. */
  owner: string;
  /** Rendered: the module version, the record's generation, and the ids of its resources in order. */
  rendered?: { version: string; generation: number; ids: string[] };
  problem?: { reason: RenderProblemReason; message: string };
}

/** What renderDeclaration needs: the node's name, every assignment and module, and the stored Declaration. */
export interface RenderInput {
  node: string;
  /** Assignments of any node; those of `node` are picked and ordered here. */
  assignments: readonly Assignment[];
  modules: ReadonlyMap<string, Module>;
  current?: Declaration;
  /** The resources of the node's Routes (render-routes.ts), rendered after every assignment's. */
  routeResources?: readonly DeclaredResource[];
  /** The node's overlay resource (overlay.ts `renderOverlay`), rendered last; none: the node is not on the overlay. */
  overlay?: DeclaredResource;
}

/** A rendered Declaration: its spec, its owner records, one outcome per assignment, and whether resources changed. */
export interface Rendering {
  spec: DeclarationSpec;
  owners: OwnerRecords;
  outcomes: OwnerOutcome[];
  changed: boolean;
}

/** Orders assignments by creationTimestamp, then name. */
export function compareAssignments(a: Assignment, b: Assignment): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/** The assignments of `node`, in rendering order. */
export function assignmentsOf(node: string, assignments: readonly Assignment[]): Assignment[] {
  return assignments.filter((a) => a.spec.node === node).sort(compareAssignments);
}

/** The id of a module resource once rendered for an assignment. */
export function prefixedId(owner: string, id: string): string {
  return `${owner}/${id}`;
}

/**
 * A module's resources at `version` as owned by `owner`: ids and dependsOn prefixed, order kept, each
 * carrying the version, and each Service's env holding it as MODULE_VERSION_ENV.
 */
export function renderTemplates(
  owner: string,
  version: string,
  templates: readonly ModuleResource[],
): DeclaredResource[] {
  return templates.map((t) => {
    const spec = t.kind === 'Service' ? { ...t.spec, env: { ...t.spec.env, [MODULE_VERSION_ENV]: version } } : t.spec;
    const r: Record<string, unknown> = { id: prefixedId(owner, t.id), owner, version, kind: t.kind, spec };
    if (t.dependsOn) r.dependsOn = t.dependsOn.map((d) => prefixedId(owner, d));
    return r as DeclaredResource;
  });
}

type Problem = { reason: RenderProblemReason; message: string };
type Selection = { version: string; resources: DeclaredResource[]; problem?: Problem } | { problem: Problem };

/** What one assignment renders to under the version rule (see the module comment), or why nothing. */
function select(
  a: Assignment,
  modules: ReadonlyMap<string, Module>,
  held: DeclaredResource[],
  heldRecord?: OwnerRecord,
): Selection {
  const name = a.metadata.name ?? '';
  const mod = modules.get(a.spec.module);
  if (!mod) return { problem: { reason: 'ModuleNotFound', message: `module "${a.spec.module}" not found` } };
  const wanted = a.spec.version ?? mod.spec.version;
  let resources: DeclaredResource[];
  if (wanted === mod.spec.version) resources = renderTemplates(name, wanted, mod.spec.resources);
  else if (heldRecord?.version === wanted) resources = held;
  else {
    const unavailable = `version ${wanted} of module "${mod.metadata.name}" is not available: the module is at version ${mod.spec.version}`;
    if (heldRecord && held.length > 0) {
      return {
        version: heldRecord.version,
        resources: held,
        problem: {
          reason: 'VersionNotAvailable',
          message: `${unavailable}; the node keeps version ${heldRecord.version}`,
        },
      };
    }
    return { problem: { reason: 'VersionNotAvailable', message: unavailable } };
  }
  const long = resources.find((r) => r.id.length > MAX_ID_LENGTH);
  if (long) {
    return {
      problem: {
        reason: 'InvalidResourceId',
        message: `resource id "${long.id}" is longer than ${MAX_ID_LENGTH} characters: shorten the assignment's name or the module's resource ids`,
      },
    };
  }
  return { version: wanted, resources };
}

/**
 * True when `current` records another version for the assignment than the module's current one, which the
 * assignment follows (no pin, or pinned to it): its rendering renders that version and records it, so the
 * Declaration changes (the version rule of `select`). False when it cannot say without rendering.
 */
export function recordBehindModule(a: Assignment, mod: Module, current: Declaration): boolean {
  if ((a.spec.version ?? mod.spec.version) !== mod.spec.version) return false;
  const record = readOwnerRecords(current)[a.metadata.name ?? ''];
  return record !== undefined && record.version !== mod.spec.version;
}

/** Renders the Declaration of `input.node`: see the module comment for the rules. */
export function renderDeclaration(input: RenderInput): Rendering {
  const { current } = input;
  const previous = readOwnerRecords(current);
  const heldBy = groupByOwner(current?.spec.resources ?? []);
  const picked = assignmentsOf(input.node, input.assignments).map((a) => {
    const owner = a.metadata.name ?? '';
    const held = heldBy.get(owner) ?? [];
    return { owner, held, selection: select(a, input.modules, held, previous[owner]) };
  });
  const resources = [
    ...picked.flatMap((p) => ('resources' in p.selection ? p.selection.resources : [])),
    ...(input.routeResources ?? []),
  ];
  if (input.overlay) resources.push(input.overlay);
  const changed = !current || !jsonEqual(current.spec.resources, resources);
  const generation = changed ? (current?.spec.generation ?? 0) + 1 : current.spec.generation;
  const owners: OwnerRecords = {};
  const outcomes: OwnerOutcome[] = picked.map(({ owner, held, selection }) => {
    if (!('resources' in selection)) return { owner, problem: selection.problem };
    const prev = previous[owner];
    const same = prev !== undefined && jsonEqual(held, selection.resources);
    owners[owner] = { version: selection.version, generation: same ? prev.generation : generation };
    const rendered = { ...owners[owner], ids: selection.resources.map((r) => r.id) };
    return { owner, rendered, ...(selection.problem ? { problem: selection.problem } : {}) };
  });
  return { spec: { generation, resources }, owners, outcomes, changed };
}

function groupByOwner(resources: readonly DeclaredResource[]): Map<string, DeclaredResource[]> {
  const by = new Map<string, DeclaredResource[]>();
  for (const r of resources) {
    const list = by.get(r.owner);
    if (list) list.push(r);
    else by.set(r.owner, [r]);
  }
  return by;
}

/** The ownerReference from a Declaration to its Node (deleting the Node deletes the Declaration). */
export function nodeOwnerReference(node: Node): OwnerReference {
  return controllerReference('Node', node);
}

/**
 * The Declaration to write for a rendering: a new one, or `current` with the rendered spec, owner records
 * and Node ownerReference (its other metadata and resourceVersion kept); undefined when nothing would change.
 */
export function declarationToWrite(opts: {
  node: Node;
  rendering: Rendering;
  current?: Declaration;
}): Declaration | undefined {
  const { node, rendering, current } = opts;
  const owners = formatOwnerRecords(rendering.owners);
  const ref = nodeOwnerReference(node);
  const refs = [
    ...(current?.metadata.ownerReferences ?? []).filter((r) => !(r.kind === 'Node' && r.apiVersion === API_VERSION)),
    ref,
  ];
  if (current) {
    const sameRefs = jsonEqual(current.metadata.ownerReferences ?? [], refs);
    const sameOwners = current.metadata.annotations?.[OWNERS_ANNOTATION] === owners;
    if (!rendering.changed && sameRefs && sameOwners) return undefined;
  }
  const metadata = {
    ...(current?.metadata ?? { name: node.metadata.name }),
    annotations: { ...current?.metadata.annotations, [OWNERS_ANNOTATION]: owners },
    ownerReferences: refs,
  };
  return { apiVersion: API_VERSION, kind: 'Declaration', metadata, spec: rendering.spec };
}
