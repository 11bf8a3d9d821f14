/**
 * `meshctl version`: the client's version and the server's `/version`.
 */
import pkg from '../package.json' with { type: 'json' };
import { FLAGS, type Command, type CommandContext } from './command.ts';
import { EXIT_OK } from './errors.ts';
import { toJson, toYaml } from './printers/output.ts';

/** meshctl's version, from package.json (inlined by the bundler). */
export const CLIENT_VERSION = `v${pkg.version}`;

/** The `version` command. */
export const command: Command = {
  usage: 'version [--client] [-o json|yaml]',
  description: 'Print the client version and the version of the control plane it talks to.',
  flags: [
    { name: 'client', type: 'boolean', help: 'print the client version only (no server needed)' },
    FLAGS.output(['json', 'yaml']),
  ],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  const info: Record<string, unknown> = {
    clientVersion: { meshctlVersion: CLIENT_VERSION, platform: `${process.platform}/${process.arch}` },
  };
  if (!ctx.args.bool('client')) info.serverVersion = await ctx.client().raw('/version');
  const output = ctx.args.str('output');
  if (output === 'json') ctx.out(toJson(info));
  else if (output === 'yaml') ctx.out(await toYaml(info));
  else {
    ctx.out(`Client Version: ${CLIENT_VERSION}\n`);
    const server = info.serverVersion as { meshctlVersion?: string; gitVersion?: string } | undefined;
    if (server)
      ctx.out(
        `Server Version: ${server.meshctlVersion ? `v${server.meshctlVersion}` : '<unknown>'} (Kubernetes API ${server.gitVersion ?? '<unknown>'})\n`,
      );
  }
  return EXIT_OK;
}
