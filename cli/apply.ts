/**
 * `meshctl apply -f FILE|DIR|- [-R] [--prune --applyset NAME] [--watch]`: creates or updates every object in the
 * manifests and prints `node/a created|configured|unchanged` (apply-run.ts). With `--prune`, the objects form an
 * applyset and members the manifests no longer contain are deleted (`node/b pruned`); with `--watch` it keeps
 * running and applies again after every change to the files (apply-watch.ts).
 */
import { FLAGS, type Command, type CommandContext } from './command.ts';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.ts';
import { applyOnce, type ApplyRunOptions } from './apply-run.ts';

export { docContext, reportProblems } from './apply-run.ts';

/** The `apply` command. */
export const command: Command = {
  usage: 'apply -f FILE|DIR|- [-R] [--dry-run=server] [--prune --applyset NAME [--allow-empty]] [--watch]',
  description:
    'Create or update resources from manifests (multi-document YAML, JSON, JSON arrays, Lists). Fields removed from a manifest since the last apply are removed from the object. ' +
    'With --prune the objects are the members of an applyset (its parent is the ApplySet NAME; each member is labelled applyset.meshctl.dev/part-of), and members no longer in the manifests are deleted, except those annotated meshctl.dev/prune: disabled. ' +
    'With --watch it keeps running and applies again after each change to the files.',
  examples: [
    'meshctl apply -f manifests/samples/',
    'meshctl apply -f node.yaml --dry-run=server',
    'cat node.yaml | meshctl apply -f -',
    'meshctl apply -f site/ -R --prune --applyset site',
    'meshctl apply -f site/ -R --prune --applyset site --watch',
  ],
  flags: [
    FLAGS.filename,
    FLAGS.recursive,
    FLAGS.dryRun,
    { name: 'prune', type: 'boolean', help: 'delete the members of the applyset that the manifests no longer contain' },
    { name: 'applyset', type: 'string', arg: 'NAME', help: 'the ApplySet that records what --prune may delete' },
    {
      name: 'allow-empty',
      type: 'boolean',
      help: 'let --prune delete every member when the manifests hold no objects',
    },
    { name: 'watch', short: 'w', type: 'boolean', help: 'keep running: apply again after each change to the files' },
    {
      name: 'debounce',
      type: 'string',
      arg: 'DURATION',
      help: 'with --watch: apply once no file changed for this long (default 300ms)',
    },
  ],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  const opts = runOptions(ctx);
  if (ctx.args.bool('watch')) {
    const { watchApply } = await import('./apply-watch.ts');
    return watchApply(ctx, opts);
  }
  return (await applyOnce(ctx, opts)).failed ? EXIT_FAILED : EXIT_OK;
}

/** The run options from the flags; usage errors for combinations that cannot work. */
function runOptions(ctx: CommandContext): ApplyRunOptions {
  const { args } = ctx;
  const files = args.list('filename');
  if (!files.length) throw new UsageError('must specify one of -f');
  if (args.positionals.length) throw new UsageError(`unexpected arguments: ${args.positionals.join(' ')}`);
  const applySet = args.str('applyset');
  if (args.bool('prune') && !applySet)
    throw new UsageError('--prune needs --applyset NAME: the ApplySet that records what this apply may delete');
  if (!args.bool('prune') && (applySet || args.bool('allow-empty')))
    throw new UsageError('--applyset and --allow-empty are used only with --prune');
  if (args.str('debounce') !== undefined && !args.bool('watch')) throw new UsageError('--debounce needs --watch');
  if (args.bool('watch') && files.includes('-')) throw new UsageError('--watch cannot watch stdin (-f -)');
  return {
    files,
    recursive: args.bool('recursive'),
    dryRun: args.str('dry-run') === 'server',
    prune: args.bool('prune') && applySet ? { applySet, allowEmpty: args.bool('allow-empty') } : undefined,
  };
}
