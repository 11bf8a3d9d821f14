/**
 * The applied-set record of `apply --prune`, as kubectl's ApplySet: a parent object (an `ApplySet`, named by
 * `--applyset NAME`) whose label `applyset.meshctl.dev/id` holds the set's id, and the label
 * `applyset.meshctl.dev/part-of=<id>` on every member. Prune lists members by that label, in the kinds the
 * parent's `spec.kinds` names, and never guesses: an object without the label is never pruned, and an object
 * that is a member of another set is refused rather than taken over.
 *
 * The parent's annotation `applyset.meshctl.dev/tooling: meshctl/vX` says which tool manages the set; a parent
 * managed by another tool is refused, as kubectl refuses one.
 *
 * The id is kubectl's: `applyset-<base64url(sha256("<name>.<namespace>.<kind>.<group>"))>-v1` of the parent.
 * The parent's `spec.kinds` is widened before the members are applied and narrowed after prune, so a crash
 * between the two leaves a superset, never a kind whose members prune would not see.
 */
import { createHash } from 'node:crypto';
import type { Client } from '../api/client/types.ts';
import { ApiError, isReason } from '../api/meta/api-error.ts';
import { API_VERSION, type KubeObject } from '../api/meta/types.ts';
import type { ApplySet } from '../api/v1alpha1/generated/applyset.ts';
import { KINDS } from '../api/v1alpha1/kinds.ts';
import { CliError } from './errors.ts';
import { CLIENT_VERSION } from './version.ts';

/** The parent's label holding the set's id. */
export const APPLYSET_ID_LABEL = 'applyset.meshctl.dev/id';
/** The parent's annotation naming the tool that manages the set (kubectl's `applyset.kubernetes.io/tooling`). */
export const TOOLING_ANNOTATION = 'applyset.meshctl.dev/tooling';
/** The label on every member: the id of its set. */
export const PART_OF_LABEL = 'applyset.meshctl.dev/part-of';
/** Annotation that keeps an object from being pruned when set to `disabled`. */
export const PRUNE_ANNOTATION = 'meshctl.dev/prune';

/** The id of the set whose parent is the ApplySet `name` (kubectl's formula, with our kind and group). */
export function applySetId(name: string): string {
  const digest = createHash('sha256').update(`${name}..ApplySet.meshctl.dev`).digest('base64url');
  return `applyset-${digest}-v1`;
}

/** A copy of a manifest labelled as a member of the set `id`. */
export function asMember(manifest: KubeObject, id: string): KubeObject {
  const labels = { ...(manifest.metadata.labels ?? {}), [PART_OF_LABEL]: id };
  return { ...manifest, metadata: { ...manifest.metadata, labels } };
}

/** Throws when `live` is a member of another set (apply would take it over; kubectl refuses too). */
export function checkNotInOtherSet(live: KubeObject, id: string): void {
  const other = live.metadata.labels?.[PART_OF_LABEL];
  if (other && other !== id)
    throw new CliError(
      `${live.kind.toLowerCase()}/${live.metadata.name} is a member of another applyset (${PART_OF_LABEL}=${other}); not taking it over`,
    );
}

/** `Kind/name`, the key of an object within a set. */
export function memberKey(obj: KubeObject): string {
  return `${obj.kind}/${obj.metadata.name}`;
}

/** Whether an object is annotated to be kept by prune. */
export function pruneDisabled(obj: KubeObject): boolean {
  return obj.metadata.annotations?.[PRUNE_ANNOTATION] === 'disabled';
}

/** Kinds in registry order (prune deletes in the reverse: assignments before modules before nodes). */
export function sortKinds(kinds: Iterable<string>): string[] {
  const order = (k: string): number => {
    const i = KINDS.findIndex((info) => info.kind === k);
    return i < 0 ? KINDS.length : i;
  };
  return [...new Set(kinds)].sort((a, b) => order(a) - order(b) || a.localeCompare(b));
}

/** The parent as it stands: its kinds (empty when it does not exist yet). */
export async function readParent(client: Client, name: string): Promise<{ parent?: ApplySet; kinds: string[] }> {
  let parent: ApplySet | undefined;
  try {
    parent = await client.get('applysets', name);
  } catch (e) {
    if (!isReason(e, 'NotFound')) throw e;
  }
  if (parent) checkParent(parent, name);
  return { parent, kinds: parent?.spec?.kinds ?? [] };
}

function checkParent(parent: ApplySet, name: string): void {
  const tooling = parent.metadata.annotations?.[TOOLING_ANNOTATION];
  if (tooling !== undefined && !tooling.startsWith('meshctl/'))
    throw new CliError(`applyset/${name} is managed by ${tooling} (${TOOLING_ANNOTATION}), not meshctl`);
  const id = parent.metadata.labels?.[APPLYSET_ID_LABEL];
  if (id !== undefined && id !== applySetId(name))
    throw new CliError(`applyset/${name} has the label ${APPLYSET_ID_LABEL}=${id}, not ${applySetId(name)}`);
}

/** Creates the parent, or sets its id label, kinds and source (a merge patch); returns it. */
export async function writeParent(
  client: Client,
  name: string,
  spec: { kinds: string[]; source: string },
  exists: boolean,
): Promise<ApplySet> {
  const labels = { [APPLYSET_ID_LABEL]: applySetId(name) };
  const annotations = { [TOOLING_ANNOTATION]: `meshctl/${CLIENT_VERSION}` };
  const body = { spec: { kinds: sortKinds(spec.kinds), source: spec.source } };
  if (exists) return client.patch('applysets', name, { metadata: { labels, annotations }, ...body });
  try {
    return await client.create('applysets', {
      apiVersion: API_VERSION,
      kind: 'ApplySet',
      metadata: { name, labels, annotations },
      ...body,
    });
  } catch (e) {
    if (e instanceof ApiError && e.reason === 'AlreadyExists') return writeParent(client, name, spec, true);
    throw e;
  }
}
