/**
 * `meshctl backup create|pull|list|verify|restore`. `create` asks the control plane for a backup (it is taken,
 * written and verified there: api/server/backup/) and, with `-o FILE`, streams the verified archive to this
 * machine — off the node — checking its SHA-256 on arrival; `--to DIR` writes it on the control-plane node
 * (e.g. a mounted remote disk). `pull NAME -o FILE` fetches an existing one; `list` shows age, size, counts and
 * verification. `verify` and `restore` work offline, with no control plane (backup-offline.ts, its own bundle).
 */
import { createHash } from 'node:crypto';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { dirname, basename, join, resolve } from 'node:path';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { errorFromResponse, readBody } from '../api/client/answers.ts';
import { HttpTransport } from '../api/client/http-transport.ts';
import { fsyncDir } from '../api/meta/atomic-file.ts';
import type { Backup } from '../api/v1alpha1/generated/backup.ts';
import type { Command, CommandContext } from './command.ts';
import { loadConfig } from './config.ts';
import { CliError, EXIT_OK, UsageError } from './errors.ts';
import { age } from './printers/age.ts';
import { alignRows } from './printers/table.ts';

const BASE = '/apis/meshctl.dev/v1alpha1/backups';

/** The `backup` command. */
export const command: Command = {
  usage:
    'backup create [-o FILE | --to DIR] | backup pull NAME -o FILE | backup list | backup verify FILE | ' +
    'backup restore FILE --data-dir DIR --node NAME',
  description:
    'Take, fetch, list, verify and restore backups of the control plane. Every backup is verified when it is made ' +
    '(restored into a scratch directory, opened by the store code, every object checked); keep one off the node ' +
    'with -o FILE. verify and restore need no control plane.',
  examples: [
    'meshctl backup create -o mesh-$(date +%F).meshbackup   # taken, verified, saved on this machine',
    'meshctl backup create --to /mnt/nas/meshctl             # written on the control-plane node',
    'meshctl backup list',
    'meshctl backup verify mesh-2030-01-01.meshbackup',
    'meshctl backup restore mesh.meshbackup --data-dir /var/lib/meshctl/control-plane --node new-box',
  ],
  flags: [
    { name: 'output', short: 'o', type: 'string', arg: 'FILE', help: 'create, pull: save the archive to FILE here' },
    { name: 'to', type: 'string', arg: 'DIR', help: 'create: write the archive to DIR on the control-plane node' },
    { name: 'name', type: 'string', arg: 'NAME', help: 'create: the Backup name (default backup-<time>-<hex>)' },
    { name: 'description', type: 'string', arg: 'TEXT', help: 'create: why it was taken' },
    {
      name: 'ca-pin',
      type: 'string',
      arg: 'PIN',
      help: "verify, restore: the mesh's CA pin (default: the meshconfig's CA)",
    },
    { name: 'data-dir', type: 'string', arg: 'DIR', help: 'restore: the new, empty data directory' },
    { name: 'node', type: 'string', arg: 'NAME', help: 'restore: the node the control plane will run on' },
  ],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  const [sub, ...rest] = ctx.args.positionals;
  if (sub === 'create') return create(ctx, rest);
  if (sub === 'pull') return pull(ctx, rest);
  if (sub === 'list') return list(ctx, rest);
  if (sub === 'verify' || sub === 'restore') return (await import('./backup-offline.ts')).offline(ctx, sub, rest);
  throw new UsageError(
    sub === undefined
      ? 'missing subcommand: create, pull, list, verify or restore'
      : `unknown subcommand "${sub}": expected create, pull, list, verify or restore`,
  );
}

function transport(ctx: CommandContext): HttpTransport {
  return new HttpTransport({ config: loadConfig({ flag: ctx.args.str('config') }) });
}

async function create(ctx: CommandContext, rest: string[]): Promise<number> {
  if (rest.length) throw new UsageError(`backup create takes no arguments (got "${rest.join(' ')}")`);
  const to = ctx.args.str('to');
  const name = ctx.args.str('name');
  const description = ctx.args.str('description');
  const t = transport(ctx);
  try {
    const body = { metadata: name ? { name } : {}, spec: description !== undefined ? { description } : {} };
    const path = to ? `${BASE}?to=${encodeURIComponent(to)}` : BASE;
    const b = (await t.json({ method: 'POST', path, body })) as Backup;
    const s = b.status ?? {};
    const objects = Object.values(s.objectCounts ?? {}).reduce((x, y) => x + y, 0);
    ctx.out(
      `backup ${b.metadata.name} saved and verified on the control-plane node: ${s.file} ` +
        `(${s.bytes} bytes, resourceVersion ${s.storeResourceVersion}, ${objects} objects)\n`,
    );
    const out = ctx.args.str('output');
    if (out) await download(ctx, t, b.metadata.name ?? '', out);
    return EXIT_OK;
  } finally {
    t.close();
  }
}

async function pull(ctx: CommandContext, rest: string[]): Promise<number> {
  const [name, ...extra] = rest;
  const out = ctx.args.str('output');
  if (!name || extra.length || !out) throw new UsageError('usage: meshctl backup pull NAME -o FILE');
  const t = transport(ctx);
  try {
    await download(ctx, t, name, out);
    return EXIT_OK;
  } finally {
    t.close();
  }
}

/** Streams the archive to a temporary file beside `out` (0600), checks its SHA-256, then renames it into place. */
async function download(ctx: CommandContext, t: HttpTransport, name: string, out: string): Promise<void> {
  const res = await t.send({ method: 'GET', path: `${BASE}/${encodeURIComponent(name)}/archive`, stream: true });
  const code = res.statusCode ?? 0;
  if (code < 200 || code >= 300) throw errorFromResponse(code, await readBody(res));
  const file = resolve(out);
  const tmp = join(dirname(file), `.${basename(file)}.partial`);
  const hash = createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      bytes += chunk.length;
      cb(null, chunk);
    },
  });
  try {
    await pipeline(res, tap, createWriteStream(tmp, { mode: 0o600 }));
    const fh = await open(tmp, 'r');
    await fh.sync();
    await fh.close();
    const sum = hash.digest('hex');
    if (sum !== res.headers['x-meshctl-sha256'])
      throw new CliError(
        `the archive of backup ${name} arrived damaged (SHA-256 ${sum}, the control plane sent ${String(res.headers['x-meshctl-sha256'])})`,
      );
    renameSync(tmp, file);
    await fsyncDir(dirname(file));
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  ctx.out(`backup ${name} saved off the node: ${file} (${bytes} bytes, SHA-256 ${res.headers['x-meshctl-sha256']})\n`);
}

async function list(ctx: CommandContext, rest: string[]): Promise<number> {
  if (rest.length) throw new UsageError(`backup list takes no arguments (got "${rest.join(' ')}")`);
  const { items } = await ctx.client().list('backups');
  if (!items.length) {
    ctx.err('No backups found\n');
    return EXIT_OK;
  }
  const rows = items
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''))
    .map((b) => {
      const s = b.status ?? {};
      const objects = Object.values(s.objectCounts ?? {}).reduce((x, y) => x + y, 0);
      const verified = s.verified
        ? 'True'
        : `False (${s.conditions?.find((c) => c.type === 'Verified')?.message ?? 'not verified'})`;
      return [
        b.metadata.name ?? '',
        age(b.metadata.creationTimestamp),
        String(s.bytes ?? '-'),
        String(objects),
        s.storeResourceVersion ?? '-',
        verified,
        s.file ?? '-',
      ];
    });
  ctx.out(alignRows([['NAME', 'AGE', 'SIZE', 'OBJECTS', 'RESOURCEVERSION', 'VERIFIED', 'FILE'], ...rows]));
  return EXIT_OK;
}
