/**
 * `meshctl api-resources`: the resource types meshctl knows (its built-in registry, which the server serves).
 */
import { API_VERSION } from '../api/meta/types.ts';
import { KINDS } from '../api/v1alpha1/kinds.ts';
import { FLAGS, type Command, type CommandContext } from './command.ts';
import { EXIT_OK } from './errors.ts';
import { alignRows } from './printers/table.ts';

/** The `api-resources` command. */
export const command: Command = {
  usage: 'api-resources [-o name]',
  description: 'List the resource types of meshctl.dev/v1alpha1 with their short names (all are cluster-scoped).',
  flags: [FLAGS.output(['name', 'wide'])],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.args.str('output') === 'name') {
    ctx.out(KINDS.map((k) => `${k.plural}.meshctl.dev\n`).join(''));
    return EXIT_OK;
  }
  const rows = [
    ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'],
    ...KINDS.map((k) => [k.plural, k.shortNames.join(','), API_VERSION, 'false', k.kind]),
  ];
  ctx.out(alignRows(rows));
  return EXIT_OK;
}
