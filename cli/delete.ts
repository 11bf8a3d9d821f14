/**
 * `meshctl delete`: deletes objects by name (`delete node a b`, `delete node/a`), by label (`-l`), all of
 * a kind (`--all`) or as listed in manifests (`-f`), printing `node "a" deleted`.
 */
import { isUnreachable } from '../api/client/http-client.ts';
import { isReason } from '../api/meta/api-error.ts';
import type { KindInfo } from '../api/v1alpha1/kind-info.ts';
import { reportProblems } from './apply.ts';
import { FLAGS, type Command, type CommandContext } from './command.ts';
import { EXIT_FAILED, EXIT_OK, UsageError, formatError } from './errors.ts';
import { loadManifests } from './manifests.ts';
import { kindOfObject, parseTargets } from './resources.ts';

interface Victim {
  kind: KindInfo;
  name: string;
}

/** The `delete` command. */
export const command: Command = {
  usage: 'delete <resource> <name...> | delete <resource>/<name>... | delete -f FILE|DIR [flags]',
  description:
    'Delete resources by name, by label selector, all of a kind, or those listed in manifests. Objects with finalizers are marked for deletion and go once their finalizers are done.',
  examples: [
    'meshctl delete node node-a',
    'meshctl delete -f manifests/samples/route.yaml',
    'meshctl delete assignments -l app=web',
  ],
  flags: [
    FLAGS.filename,
    FLAGS.recursive,
    FLAGS.selector,
    FLAGS.dryRun,
    { name: 'all', type: 'boolean', help: 'delete every object of the resource type' },
    { name: 'ignore-not-found', type: 'boolean', help: 'treat "not found" as a successful delete' },
  ],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  const { victims, failed: loadFailed } = await victimsOf(ctx);
  const dryRun = ctx.args.str('dry-run') === 'server';
  let failed = loadFailed;
  for (const { kind, name } of victims) {
    try {
      await ctx.client().delete(kind.plural, name, { dryRun });
      ctx.out(`${kind.singular} "${name}" deleted${dryRun ? ' (server dry run)' : ''}\n`);
    } catch (e) {
      if (isUnreachable(e)) throw e;
      if (isReason(e, 'NotFound') && ctx.args.bool('ignore-not-found')) continue;
      ctx.err(formatError(e) + '\n');
      failed = true;
    }
  }
  return failed ? EXIT_FAILED : EXIT_OK;
}

/** What to delete, from -f, from names, or from a list (-l / --all). */
async function victimsOf(ctx: CommandContext): Promise<{ victims: Victim[]; failed: boolean }> {
  const { args } = ctx;
  const files = args.list('filename');
  if (files.length) {
    if (args.positionals.length) throw new UsageError('cannot combine -f with resource arguments');
    const { docs, problems } = await loadManifests(files, { recursive: args.bool('recursive') });
    reportProblems(ctx, problems);
    return {
      victims: docs.map((d) => ({ kind: kindOfObject(d.object), name: d.object.metadata.name as string })),
      failed: problems.length > 0,
    };
  }
  const victims: Victim[] = [];
  const bySelection = args.bool('all') || args.str('selector') !== undefined;
  for (const { kind, names } of parseTargets(args.positionals)) {
    if (names.length && bySelection) throw new UsageError('names cannot be combined with -l or --all');
    if (!names.length && !bySelection) throw new UsageError('resource(s) were provided, but no name was specified');
    const listed = names.length
      ? names
      : (await ctx.client().list(kind.plural, { labelSelector: args.str('selector') })).items.map(
          (o) => o.metadata.name as string,
        );
    victims.push(...listed.map((name) => ({ kind, name })));
  }
  if (!victims.length) ctx.err('No resources found\n');
  return { victims, failed: false };
}
