/**
 * `meshctl logs NODE [SERVICE] [-f] [--tail N] [--timestamps]`: prints a service's log as the control
 * plane stored it. Without SERVICE, the node's only service with logs is used; when it has several,
 * meshctl names them and asks for one (as kubectl does for a pod's containers). `-f` goes on printing
 * new lines until Ctrl-C (exit 0) or until the control plane closes the stream.
 */
import type { IncomingMessage } from 'node:http';
import { errorFromResponse, readBody } from '../api/client/answers.ts';
import { HttpTransport } from '../api/client/http-transport.ts';
import { logsPath, type ServiceLogList } from '../api/wire/log-wire.ts';
import type { Command, CommandContext } from './command.ts';
import { loadConfig } from './config.ts';
import { CliError, EXIT_OK, UsageError } from './errors.ts';

/** Picks the service to show: the one given, or the node's only one. */
async function chooseService(t: HttpTransport, node: string, given: string | undefined): Promise<string> {
  if (given !== undefined) return given;
  const list = (await t.json({ method: 'GET', path: logsPath(node) })) as ServiceLogList;
  const names = list.items.map((i) => i.service);
  if (names.length === 1) return names[0];
  if (names.length === 0) throw new CliError(`node ${node} has no service logs yet`);
  throw new CliError(`a service name must be specified for node ${node}, choose one of: [${names.join(' ')}]`);
}

function tailLines(ctx: CommandContext): number | undefined {
  const tail = ctx.args.str('tail');
  if (tail === undefined || tail === '-1') return undefined;
  if (!/^\d+$/.test(tail)) throw new UsageError(`--tail must be a number of lines (or -1 for all), not "${tail}"`);
  return Number(tail);
}

/** Copies the response body to stdout until it ends or the command is stopped. */
function print(ctx: CommandContext, res: IncomingMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopped = false;
    ctx.onStop(() => {
      stopped = true;
      res.destroy();
      resolve();
    });
    res.setEncoding('utf8');
    res.on('data', (text: string) => ctx.out(text));
    res.once('end', () => resolve());
    res.once('error', (e) => (stopped ? resolve() : reject(e)));
    res.once('close', () => resolve());
  });
}

export const command: Command = {
  usage: 'logs NODE [SERVICE] [flags]',
  description:
    'Print the log of a service on a node, as collected by the control plane. SERVICE is the Service resource id\n' +
    "in the node's Declaration (<assignment>/<resource id>); it may be left out when the node has only one service with logs.\n" +
    'Lines a node had to drop (its log buffer was full while the control plane was unreachable) are marked where they were.',
  examples: [
    "meshctl logs node-a                          # the log of node-a's only service",
    'meshctl logs node-a greeter-on-node-a/service --tail 20',
    'meshctl logs node-a greeter-on-node-a/service -f   # follow until Ctrl-C',
  ],
  flags: [
    { name: 'follow', short: 'f', type: 'boolean', help: 'go on printing new lines as they arrive, until Ctrl-C' },
    { name: 'tail', type: 'string', arg: 'N', help: 'print only the last N lines (default: all, -1)' },
    { name: 'timestamps', type: 'boolean', help: 'start each line with the time the node read it (RFC 3339)' },
  ],
  async run(ctx) {
    const [node, service, ...extra] = ctx.args.positionals;
    if (!node) throw new UsageError('a node name is required: meshctl logs NODE [SERVICE]');
    if (extra.length)
      throw new UsageError(`too many arguments: meshctl logs NODE [SERVICE] (got ${ctx.args.positionals.length})`);
    const tail = tailLines(ctx);
    const follow = ctx.args.bool('follow');
    const t = new HttpTransport({ config: loadConfig({ flag: ctx.args.str('config') }) });
    try {
      const chosen = await chooseService(t, node, service);
      const q = new URLSearchParams({ service: chosen });
      if (tail !== undefined) q.set('tailLines', String(tail));
      if (follow) q.set('follow', 'true');
      if (ctx.args.bool('timestamps')) q.set('timestamps', 'true');
      const res = await t.send({ method: 'GET', path: `${logsPath(node)}?${q}`, stream: follow });
      const code = res.statusCode ?? 0;
      if (code < 200 || code >= 300) throw errorFromResponse(code, await readBody(res));
      await print(ctx, res);
      return EXIT_OK;
    } finally {
      t.close();
    }
  },
};
