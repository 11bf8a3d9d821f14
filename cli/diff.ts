/**
 * `meshctl diff -f`: for each object in the manifests, a unified diff (YAML) between the live object and
 * what `apply` would make of it — computed by the server with a dry-run create or patch. Server-managed
 * noise (resourceVersion, uid, creationTimestamp, generation, managedFields, status, the last-applied
 * annotation) is left out. Exit code: 0 no differences, 1 differences, 2 an error (as kubectl diff).
 */
import type { Client } from '../api/client/types.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { KindInfo } from '../api/v1alpha1/kind-info.ts';
import { LAST_APPLIED, applyPatch, desiredObject, getIfExists } from './apply-object.ts';
import { docContext, reportProblems } from './apply.ts';
import { FLAGS, type Command, type CommandContext } from './command.ts';
import { EXIT_OK, UsageError, formatError, reportError } from './errors.ts';
import { loadManifests, type ManifestDoc } from './manifests.ts';
import { applySetId, asMember, memberKey, readParent } from './applyset.ts';
import { checkPrunable, listMembers, planPrune } from './prune.ts';
import { toYaml } from './printers/output.ts';
import { kindOfObject } from './resources.ts';
import { unifiedDiff } from './unified-diff.ts';

const EXIT_DIFFERENT = 1;
const EXIT_ERROR = 2;

/** The `diff` command. */
export const command: Command = {
  usage: 'diff -f FILE|DIR|- [-R] [--prune --applyset NAME [--allow-empty]]',
  description:
    'Show the differences between the live objects and what `apply -f` would make of them; with --prune also the members of the applyset that apply --prune would delete. Exit code 0: no differences; 1: differences; 2: an error.',
  examples: [
    'meshctl diff -f manifests/samples/',
    'meshctl diff -f node.yaml && echo up to date',
    'meshctl diff -f site/ -R --prune --applyset site',
  ],
  flags: [
    FLAGS.filename,
    FLAGS.recursive,
    { name: 'prune', type: 'boolean', help: 'also show the applyset members apply --prune would delete' },
    { name: 'applyset', type: 'string', arg: 'NAME', help: 'the ApplySet of --prune' },
    { name: 'allow-empty', type: 'boolean', help: 'as apply --prune --allow-empty' },
  ],
  run: async (ctx) => {
    try {
      return await run(ctx);
    } catch (e) {
      reportError(e, 'diff');
      return EXIT_ERROR;
    }
  },
};

async function run(ctx: CommandContext): Promise<number> {
  const files = ctx.args.list('filename');
  if (!files.length) {
    ctx.err("error: must specify one of -f\nSee 'meshctl diff --help' for usage.\n");
    return EXIT_ERROR;
  }
  const applySet = ctx.args.bool('prune') ? ctx.args.str('applyset') : undefined;
  if (ctx.args.bool('prune') && !applySet) throw new UsageError('--prune needs --applyset NAME');
  const { docs, problems } = await loadManifests(files, { recursive: ctx.args.bool('recursive') });
  reportProblems(ctx, problems);
  let failed = problems.length > 0;
  let different = false;
  const id = applySet ? applySetId(applySet) : undefined;
  for (const doc of docs) {
    try {
      const kind = kindOfObject(doc.object);
      const text = await diffObject(ctx.client(), kind, id ? asMember(doc.object, id) : doc.object);
      if (text) {
        ctx.out(text);
        different = true;
      }
    } catch (e) {
      ctx.err(formatError(e, docContext('diffing', doc)) + '\n');
      failed = true;
    }
  }
  if (applySet) {
    const opts = { applySet, allowEmpty: ctx.args.bool('allow-empty'), problems: problems.length };
    if (await diffPrune(ctx, docs, opts)) different = true;
  }
  return failed ? EXIT_ERROR : different ? EXIT_DIFFERENT : EXIT_OK;
}

/** Prints a diff to nothing for each member apply --prune would delete; resolves true if there is one. */
async function diffPrune(
  ctx: CommandContext,
  docs: ManifestDoc[],
  opts: { applySet: string; allowEmpty: boolean; problems: number },
): Promise<boolean> {
  const client = ctx.client();
  const { kinds } = await readParent(client, opts.applySet);
  const members = await listMembers(client, applySetId(opts.applySet), [...kinds, ...docs.map((d) => d.object.kind)]);
  const plan = planPrune(members, new Set(docs.map((d) => memberKey(d.object))));
  checkPrunable(plan, { objects: docs.length, ...opts });
  for (const obj of plan.delete) {
    const info = kindOfObject(obj);
    const path = `${info.plural}.meshctl.dev/${obj.metadata.name}`;
    const body = unifiedDiff(await toYaml(withoutNoise(obj)), '', {
      fromFile: `live/${path}`,
      toFile: `merged/${path}`,
    });
    ctx.out(`diff -u -N live/${path} merged/${path}\n${body}`);
  }
  return plan.delete.length > 0;
}

/** The unified diff for one manifest object, or '' when apply would change nothing. */
export async function diffObject(client: Client, kind: KindInfo, manifest: KubeObject): Promise<string> {
  const desired = desiredObject(manifest);
  const name = desired.metadata.name as string;
  const live = await getIfExists(client, kind.plural, name);
  let merged: KubeObject;
  if (!live) merged = await client.create(kind.plural, desired, { dryRun: true });
  else {
    const patch = applyPatch(desired, live);
    merged = Object.keys(patch).length ? await client.patch(kind.plural, name, patch, { dryRun: true }) : live;
  }
  const path = `${kind.plural}.meshctl.dev/${name}`;
  const body = unifiedDiff(live ? await toYaml(withoutNoise(live)) : '', await toYaml(withoutNoise(merged)), {
    fromFile: `live/${path}`,
    toFile: `merged/${path}`,
  });
  return body ? `diff -u -N live/${path} merged/${path}\n${body}` : '';
}

/** A copy without the fields the server manages (they always differ and say nothing about the manifest). */
export function withoutNoise(obj: KubeObject): KubeObject {
  const copy = structuredClone(obj);
  delete copy.status;
  const meta = copy.metadata as Record<string, unknown>;
  for (const f of ['resourceVersion', 'uid', 'managedFields', 'creationTimestamp', 'generation', 'selfLink'])
    delete meta[f];
  if (copy.metadata.annotations) {
    delete copy.metadata.annotations[LAST_APPLIED];
    if (!Object.keys(copy.metadata.annotations).length) delete copy.metadata.annotations;
  }
  return copy;
}
