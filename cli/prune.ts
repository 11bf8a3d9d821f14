/**
 * Prune of `apply --prune` and `diff --prune`: which members of an applyset the manifests no longer contain
 * (a pure plan over the members listed by the part-of label), and deleting them. The safety rails:
 * - members annotated `meshctl.dev/prune: disabled` are kept (and said so);
 * - manifests that failed to load (a file that does not parse, a document without a name) prune nothing,
 *   since what they hold is unknown;
 * - manifests holding no object prune nothing unless `--allow-empty`: an empty or emptied directory would
 *   otherwise delete every member of the set.
 */
import type { Client } from '../api/client/types.ts';
import { isReason } from '../api/meta/api-error.ts';
import { API_VERSION, type KubeObject } from '../api/meta/types.ts';
import { kindByKind } from '../api/v1alpha1/kinds.ts';
import { PART_OF_LABEL, memberKey, pruneDisabled, sortKinds } from './applyset.ts';
import { CliError } from './errors.ts';

/** What prune would do: delete these (in order), keep those (annotated). */
export interface PrunePlan {
  delete: KubeObject[];
  keep: KubeObject[];
}

/** The plan for the `members` of a set given the `Kind/name` keys the manifests contain (pure). */
export function planPrune(members: KubeObject[], inManifests: ReadonlySet<string>): PrunePlan {
  const gone = members.filter((m) => !inManifests.has(memberKey(m)));
  return { delete: gone.filter((m) => !pruneDisabled(m)), keep: gone.filter(pruneDisabled) };
}

/** Every member of set `id` among `kinds`, listed by the part-of label; assignments before modules before nodes. */
export async function listMembers(client: Client, id: string, kinds: string[]): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const kind of sortKinds(kinds).reverse()) {
    const info = kindByKind(kind);
    if (!info) continue;
    const list = await client.list(info.plural, { labelSelector: `${PART_OF_LABEL}=${id}` });
    out.push(...list.items.map((o) => ({ ...o, apiVersion: API_VERSION, kind: info.kind })));
  }
  return out;
}

/**
 * Throws the refusal of the safety rails when this plan may not run: manifests that did not all load, or
 * hold no object (without --allow-empty) while the set has members to delete.
 */
export function checkPrunable(
  plan: PrunePlan,
  opts: { objects: number; problems: number; allowEmpty: boolean; applySet: string },
): void {
  if (opts.problems > 0)
    throw new CliError(
      `not pruning applyset/${opts.applySet}: ${opts.problems} manifest problem(s) above, so what the directory holds is unknown`,
    );
  if (opts.objects === 0 && !opts.allowEmpty && plan.delete.length > 0)
    throw new CliError(
      `not pruning applyset/${opts.applySet}: the manifests hold no objects, so all ${plan.delete.length} of its members would be deleted; pass --allow-empty to delete them`,
    );
}

/** `node/a`, as apply prints objects. */
export function objectRef(obj: KubeObject): string {
  return `${kindByKind(obj.kind)?.singular ?? obj.kind.toLowerCase()}/${obj.metadata.name}`;
}

/** Deletes what the plan says, printing `node/a pruned` and `node/b kept (…)`; resolves false if a delete failed. */
export async function runPrune(
  client: Client,
  plan: PrunePlan,
  opts: { dryRun: boolean; out: (t: string) => void; err: (t: string) => void; formatError: (e: unknown) => string },
): Promise<boolean> {
  let ok = true;
  for (const obj of plan.keep) opts.out(`${objectRef(obj)} kept (annotated meshctl.dev/prune: disabled)\n`);
  for (const obj of plan.delete) {
    const info = kindByKind(obj.kind);
    if (!info) continue;
    try {
      await client.delete(info.plural, obj.metadata.name as string, { dryRun: opts.dryRun });
      opts.out(`${objectRef(obj)} pruned${opts.dryRun ? ' (server dry run)' : ''}\n`);
    } catch (e) {
      if (isReason(e, 'NotFound')) continue; // deleted meanwhile: what prune wanted
      opts.err(opts.formatError(e) + '\n');
      ok = false;
    }
  }
  return ok;
}
