/**
 * One run of `meshctl apply`: load the manifests, apply every object (printing `node/a created|configured|
 * unchanged`), and with `--prune` keep the applyset (applyset.ts) and delete the members the manifests no longer
 * contain (prune.ts). `apply --watch` calls it again on every change. A bad document is reported and skipped,
 * the rest is applied; a failure makes the outcome `failed` (exit code 1).
 */
import { isUnreachable } from '../api/client/http-client.ts';
import type { Client } from '../api/client/types.ts';
import { applyObject } from './apply-object.ts';
import { applySetId, asMember, checkNotInOtherSet, memberKey, readParent, writeParent } from './applyset.ts';
import type { CommandContext } from './command.ts';
import { CliError, formatError } from './errors.ts';
import { loadManifests, type ManifestDoc, type ManifestProblem } from './manifests.ts';
import { checkPrunable, listMembers, planPrune, runPrune } from './prune.ts';
import { kindOfObject } from './resources.ts';
import { kindByKind } from '../api/v1alpha1/kinds.ts';

/** What to apply and how. */
export interface ApplyRunOptions {
  files: string[];
  recursive: boolean;
  dryRun: boolean;
  /** With `--prune`: the applyset's name and whether an empty set of manifests may prune everything. */
  prune?: { applySet: string; allowEmpty: boolean };
}

/** What one run did, counted (`apply --watch` prints the counts). */
export interface ApplyOutcome {
  failed: boolean;
  objects: number;
  problems: number;
}

/** Applies the manifests once (see the module comment). */
export async function applyOnce(ctx: CommandContext, opts: ApplyRunOptions): Promise<ApplyOutcome> {
  const { docs, problems } = await loadManifests(opts.files, { recursive: opts.recursive });
  if (!docs.length && !problems.length && !opts.prune) throw new CliError('no objects passed to apply');
  reportProblems(ctx, problems);
  const outcome = { failed: problems.length > 0, objects: docs.length, problems: problems.length };
  if (opts.prune) {
    if (!(await applyAsSet(ctx, opts, opts.prune, docs, problems.length))) outcome.failed = true;
    return outcome;
  }
  for (const doc of docs) if (!(await applyDoc(ctx, doc, opts.dryRun))) outcome.failed = true;
  return outcome;
}

/**
 * Applies the documents as the members of an applyset and prunes the members they no longer contain:
 * widen the parent's kinds, apply, plan and check the prune, delete, narrow the kinds. Resolves false on a failure.
 */
async function applyAsSet(
  ctx: CommandContext,
  opts: ApplyRunOptions,
  prune: NonNullable<ApplyRunOptions['prune']>,
  docs: ManifestDoc[],
  problems: number,
): Promise<boolean> {
  const client = ctx.client();
  const id = applySetId(prune.applySet);
  const { parent, kinds: before } = await readParent(client, prune.applySet);
  const kinds = [...new Set(docs.map((d) => d.object.kind).filter((k) => kindByKind(k)))];
  const source = opts.files.join(',');
  if (!opts.dryRun && docs.length)
    await writeParent(client, prune.applySet, { kinds: [...before, ...kinds], source }, !!parent);
  let ok = true;
  for (const doc of docs) if (!(await applyDoc(ctx, doc, opts.dryRun, id))) ok = false;
  const members = await listMembers(client, id, [...before, ...kinds]);
  const plan = planPrune(members, new Set(docs.map((d) => memberKey(d.object))));
  try {
    checkPrunable(plan, { objects: docs.length, problems, ...prune });
  } catch (e) {
    ctx.err(formatError(e) + '\n');
    return false;
  }
  if (!(await runPrune(client, plan, { dryRun: opts.dryRun, out: ctx.out, err: ctx.err, formatError }))) return false;
  // Members kept by their annotation stay members: their kinds stay listed, so removing the annotation prunes them.
  const remaining = [...kinds, ...plan.keep.map((o) => o.kind)];
  if (!opts.dryRun && (parent || docs.length))
    await writeParent(client, prune.applySet, { kinds: remaining, source }, true);
  return ok;
}

/** Applies one document and prints the result; resolves false when it failed (reported on stderr). */
async function applyDoc(ctx: CommandContext, doc: ManifestDoc, dryRun: boolean, setId?: string): Promise<boolean> {
  const client: Client = ctx.client();
  try {
    const kind = kindOfObject(doc.object);
    const manifest = setId ? asMember(doc.object, setId) : doc.object;
    const check = setId ? (live: ManifestDoc['object']) => checkNotInOtherSet(live, setId) : undefined;
    const { action } = await applyObject(client, kind, manifest, { dryRun, check });
    ctx.out(`${kind.singular}/${doc.object.metadata.name} ${action}${dryRun ? ' (server dry run)' : ''}\n`);
    return true;
  } catch (e) {
    if (isUnreachable(e)) throw e;
    ctx.err(formatError(e, docContext('applying', doc)) + '\n');
    return false;
  }
}

/** `error when applying "x.yaml" (document 2)` — where a failing object came from. */
export function docContext(verb: string, doc: ManifestDoc): string {
  return `error when ${verb} "${doc.source}" (document ${doc.index})`;
}

/** Prints the manifest problems (unparsable files, documents without kind or name). */
export function reportProblems(ctx: Pick<CommandContext, 'err'>, problems: ManifestProblem[]): void {
  for (const p of problems)
    ctx.err(`error: ${p.index === undefined ? '' : `"${p.source}" (document ${p.index}): `}${p.message}\n`);
}
