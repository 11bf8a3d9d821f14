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
import { EXIT_OK, formatError, reportError } from './errors.ts';
import { loadManifests } from './manifests.ts';
import { toYaml } from './printers/output.ts';
import { kindOfObject } from './resources.ts';
import { unifiedDiff } from './unified-diff.ts';

const EXIT_DIFFERENT = 1;
const EXIT_ERROR = 2;

/** The `diff` command. */
export const command: Command = {
  usage: 'diff -f FILE|DIR|- [-R]',
  description:
    'Show the differences between the live objects and what `apply -f` would make of them. Exit code 0: no differences; 1: differences; 2: an error.',
  examples: ['meshctl diff -f manifests/samples/', 'meshctl diff -f node.yaml && echo up to date'],
  flags: [FLAGS.filename, FLAGS.recursive],
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
  const { docs, problems } = await loadManifests(files, { recursive: ctx.args.bool('recursive') });
  reportProblems(ctx, problems);
  let failed = problems.length > 0;
  let different = false;
  for (const doc of docs) {
    try {
      const kind = kindOfObject(doc.object);
      const text = await diffObject(ctx.client(), kind, doc.object);
      if (text) {
        ctx.out(text);
        different = true;
      }
    } catch (e) {
      ctx.err(formatError(e, docContext('diffing', doc)) + '\n');
      failed = true;
    }
  }
  return failed ? EXIT_ERROR : different ? EXIT_DIFFERENT : EXIT_OK;
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
