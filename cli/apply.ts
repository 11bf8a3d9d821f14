/**
 * `meshctl apply -f FILE|DIR|- [-R]`: creates or updates every object in the manifests and prints
 * `node/a created|configured|unchanged`. A bad document is reported and skipped, the rest is applied,
 * and the exit code is 1 at the end; a file that does not parse applies nothing.
 */
import { isUnreachable } from '../api/client/http-client.ts';
import { applyObject } from './apply-object.ts';
import { FLAGS, type Command, type CommandContext } from './command.ts';
import { CliError, EXIT_FAILED, EXIT_OK, UsageError, formatError } from './errors.ts';
import { loadManifests, type ManifestDoc, type ManifestProblem } from './manifests.ts';
import { kindOfObject } from './resources.ts';

/** The `apply` command. */
export const command: Command = {
  usage: 'apply -f FILE|DIR|- [-R] [--dry-run=server]',
  description:
    'Create or update resources from manifests (multi-document YAML, JSON, JSON arrays, Lists). Fields removed from a manifest since the last apply are removed from the object.',
  examples: [
    'meshctl apply -f manifests/samples/',
    'meshctl apply -f node.yaml --dry-run=server',
    'cat node.yaml | meshctl apply -f -',
  ],
  flags: [FLAGS.filename, FLAGS.recursive, FLAGS.dryRun],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  const files = ctx.args.list('filename');
  if (!files.length) throw new UsageError('must specify one of -f');
  if (ctx.args.positionals.length) throw new UsageError(`unexpected arguments: ${ctx.args.positionals.join(' ')}`);
  const { docs, problems } = await loadManifests(files, { recursive: ctx.args.bool('recursive') });
  if (!docs.length && !problems.length) throw new CliError('no objects passed to apply');
  reportProblems(ctx, problems);
  const dryRun = ctx.args.str('dry-run') === 'server';
  let failed = problems.length > 0;
  for (const doc of docs) {
    try {
      const kind = kindOfObject(doc.object);
      const { action } = await applyObject(ctx.client(), kind, doc.object, { dryRun });
      ctx.out(`${kind.singular}/${doc.object.metadata.name} ${action}${dryRun ? ' (server dry run)' : ''}\n`);
    } catch (e) {
      if (isUnreachable(e)) throw e;
      ctx.err(formatError(e, docContext('applying', doc)) + '\n');
      failed = true;
    }
  }
  return failed ? EXIT_FAILED : EXIT_OK;
}

/** `error when applying "x.yaml" (document 2)` — where a failing object came from. */
export function docContext(verb: string, doc: ManifestDoc): string {
  return `error when ${verb} "${doc.source}" (document ${doc.index})`;
}

/** Prints the manifest problems (unparsable files, documents without kind or name). */
export function reportProblems(ctx: CommandContext, problems: ManifestProblem[]): void {
  for (const p of problems)
    ctx.err(`error: ${p.index === undefined ? '' : `"${p.source}" (document ${p.index}): `}${p.message}\n`);
}
