/**
 * `meshctl token create|list|delete`: join tokens, kubeadm-style. `create` prints the token once with the
 * full `mesh-agent join` command (token-create.ts); `list` shows NAME, EXPIRES, USED, DESCRIPTION (never a
 * secret: the control plane keeps only hashes); `delete` removes a token and, by cascade, its hash.
 */
import { isUnreachable } from '../api/client/http-client.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { JoinToken } from '../api/v1alpha1/generated/jointoken.ts';
import { FLAGS, type Command, type CommandContext } from './command.ts';
import { loadConfig } from './config.ts';
import { EXIT_FAILED, EXIT_OK, UsageError, formatError } from './errors.ts';
import { humanDuration } from './printers/age.ts';
import { toJson } from './printers/output.ts';
import { alignRows } from './printers/table.ts';
import { createToken, renderCreated } from './token-create.ts';

/** The `token` command. */
export const command: Command = {
  usage: 'token create [--ttl 24h] [--description TEXT] | token list | token delete ID...',
  description:
    'Create, list and delete join tokens. A token lets one machine join the mesh once, before it expires: ' +
    '`create` prints it with the full `mesh-agent join` command, including the pin of the mesh CA.',
  examples: [
    'meshctl token create --ttl 1h --description "the office box"',
    'meshctl token list',
    'meshctl token delete abcdef',
  ],
  flags: [
    {
      name: 'ttl',
      type: 'string',
      arg: 'DURATION',
      help: 'create: how long the token can be used (default 24h), e.g. 30m, 2h, 168h',
    },
    { name: 'description', type: 'string', arg: 'TEXT', help: 'create: what the token is for (shown by list)' },
    FLAGS.output(['json']),
  ],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  const [sub, ...rest] = ctx.args.positionals;
  if (sub === 'create') return create(ctx, rest);
  if (sub === 'list') return list(ctx, rest);
  if (sub === 'delete') return remove(ctx, rest);
  throw new UsageError(
    sub === undefined
      ? 'missing subcommand: create, list or delete'
      : `unknown subcommand "${sub}": expected create, list or delete`,
  );
}

async function create(ctx: CommandContext, rest: string[]): Promise<number> {
  if (rest.length) throw new UsageError(`token create takes no arguments (got "${rest.join(' ')}")`);
  const ttl = ctx.args.str('ttl');
  const description = ctx.args.str('description');
  const created = await createToken({
    config: loadConfig({ flag: ctx.args.str('config') }),
    ...(ttl !== undefined ? { ttl } : {}),
    ...(description !== undefined ? { description } : {}),
  });
  ctx.out(ctx.args.str('output') === 'json' ? toJson(created) : renderCreated(created));
  return EXIT_OK;
}

async function list(ctx: CommandContext, rest: string[]): Promise<number> {
  if (rest.length) throw new UsageError(`token list takes no arguments (got "${rest.join(' ')}")`);
  const { items } = await ctx.client().list('jointokens');
  if (ctx.args.str('output') === 'json') {
    ctx.out(toJson({ apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } }));
    return EXIT_OK;
  }
  if (!items.length) {
    ctx.err('No join tokens found\n');
    return EXIT_OK;
  }
  const now = Date.now();
  ctx.out(
    alignRows([
      ['NAME', 'EXPIRES', 'USED', 'DESCRIPTION'],
      ...items.map((t) => tokenRow(t as KubeObject & JoinToken, now)),
    ]),
  );
  return EXIT_OK;
}

/** One row of `token list`. */
export function tokenRow(t: JoinToken, now: number): string[] {
  const s = t.status ?? {};
  const at = s.expiresAt ? Date.parse(s.expiresAt) : NaN;
  const expires = Number.isNaN(at) ? '<unknown>' : at <= now ? 'expired' : `in ${humanDuration(at - now)}`;
  const used = s.used ? `yes${s.usedBy ? ` (${s.usedBy})` : ''}` : 'no';
  return [t.metadata.name ?? '', expires, used, t.spec?.description ?? ''];
}

async function remove(ctx: CommandContext, ids: string[]): Promise<number> {
  if (!ids.length) throw new UsageError('token delete needs the id of at least one token (see `meshctl token list`)');
  let failed = false;
  for (const id of ids) {
    try {
      await ctx.client().delete('jointokens', id);
      ctx.out(`jointoken "${id}" deleted\n`);
    } catch (e) {
      if (isUnreachable(e)) throw e;
      ctx.err(formatError(e) + '\n');
      failed = true;
    }
  }
  return failed ? EXIT_FAILED : EXIT_OK;
}
