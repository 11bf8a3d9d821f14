/**
 * The command line of `mesh-agent join`: joins (join.ts), then runs the agent in the same process — as
 * kubeadm's join leaves a running kubelet — unless `--no-run`, which exits once the credential is stored so
 * that a service manager can run `mesh-agent run --state-dir DIR` from then on. A failed join exits 1 with
 * one line on stderr saying why; a bad command line exits 2.
 *
 * The join token is needed only for the join: once the credential is stored, the process that runs on
 * renames itself (`process.title`, which rewrites /proc/<pid>/cmdline) to the `mesh-agent run` line it now
 * is, so `ps` shows no token for the life of the agent — as after kubeadm's join, where the token was only on
 * the command line of the join itself.
 */
import { hostname } from 'node:os';
import { parseArgs, refusePositionals, unknownOption, type FlagSpec } from '../api/meta/flags.ts';
import type { Logger } from '../api/meta/logger.ts';
import type { AgentOptions } from './agent.ts';
import { EXIT_USAGE, UsageError } from '../api/meta/usage-error.ts';
import { parseCommandLine } from './cli-args.ts';
import { joinMesh } from './join.ts';

/** Where a joined agent keeps its state when --state-dir is not given. */
export const DEFAULT_STATE_DIR = '/var/lib/meshctl/agent';

/** The help text of `mesh-agent join`. */
export const JOIN_USAGE = `Usage: mesh-agent join --server URL --token TOKEN --ca-hash sha256:HEX [flags]

Joins this machine to a mesh and runs the agent. Get the command from \`meshctl token create\`.
The server is verified against the CA pin before the token is sent; the node key (generated here, kept in
STATE-DIR/node.key) and the node credential stay on this machine. Then the agent runs as \`mesh-agent run\`
would, and \`ps\` shows it as \`mesh-agent run --state-dir STATE-DIR …\` (the token is not kept on its command
line); with --no-run it exits, and \`mesh-agent run --state-dir STATE-DIR\` runs it later (e.g. from systemd).

Flags:
  --server URL                the control plane, e.g. https://10.0.0.1:6443 (required)
  --token TOKEN               a join token from \`meshctl token create\` (required; single use)
  --ca-hash sha256:HEX        the pin of the mesh CA's public key (required)
  --name NODE                 this node's name (default: the host name)
  --site SITE                 spec.site of the Node (co-location group)
  --state-dir DIR             the agent's own directory (default ${DEFAULT_STATE_DIR})
  --root DIR                  declared paths resolve under DIR (default /)
  --no-run                    exit after joining instead of running the agent
  --reconcile-interval, --heartbeat-interval, --metrics-listen, --stop-services-on-exit: as for \`mesh-agent run\`
  -h, --help                  show this help
`;

/** A parsed `mesh-agent join` command line. */
export interface JoinCommand {
  server: string;
  token: string;
  caHash: string;
  nodeName: string;
  site?: string;
  root?: string;
  stateDir: string;
  /** The agent to run after joining; absent with --no-run. */
  run?: AgentOptions;
  /** The command line the joined agent shows once it runs: `mesh-agent run --state-dir DIR …`, without the token. */
  runLine: string;
}

const RUN_FLAGS = ['reconcile-interval', 'heartbeat-interval', 'metrics-listen'] as const;

/** The flags of `mesh-agent join` (the help is JOIN_USAGE). */
const JOIN_FLAGS: FlagSpec[] = [
  ...['server', 'token', 'ca-hash', 'name', 'site', 'state-dir', 'root', ...RUN_FLAGS].map((name): FlagSpec => ({
    name,
    type: 'string',
  })),
  ...['no-run', 'stop-services-on-exit'].map((name): FlagSpec => ({ name, type: 'boolean' })),
  { name: 'help', short: 'h', type: 'boolean' },
];

/** Parses `mesh-agent join …` (the words after `join`); 'help' for --help; throws UsageError. */
export function parseJoinCommand(argv: string[]): JoinCommand | 'help' {
  const args = parseArgs(argv, JOIN_FLAGS, { unknownFlag: unknownOption });
  if (args.bool('help')) return 'help';
  refusePositionals(args);
  const v = (name: string): string | undefined => args.str(name);
  for (const f of ['server', 'token', 'ca-hash'])
    if (!v(f)) throw new UsageError(`--${f} is required (copy the command from \`meshctl token create\`)`);
  const stateDir = v('state-dir') ?? DEFAULT_STATE_DIR;
  const runArgv = ['run', '--state-dir', stateDir];
  for (const f of RUN_FLAGS) if (v(f) !== undefined) runArgv.push(`--${f}`, v(f)!);
  if (args.bool('stop-services-on-exit')) runArgv.push('--stop-services-on-exit');
  if (v('root') !== undefined) runArgv.push('--root', v('root')!); // checked (root-dir.ts) before the join
  const run = parseCommandLine(runArgv) as AgentOptions;
  const [site, root] = [v('site'), v('root')];
  return {
    server: v('server')!,
    token: v('token')!,
    caHash: v('ca-hash')!,
    nodeName: v('name') ?? hostname().toLowerCase(),
    stateDir,
    ...(site !== undefined ? { site } : {}),
    ...(root !== undefined ? { root } : {}),
    ...(args.bool('no-run') ? {} : { run }),
    runLine: ['mesh-agent', ...runArgv].join(' '),
  };
}

/** Runs `mesh-agent join`: joins, then runs the agent with `runAgent` unless --no-run. Resolves with an exit code. */
export async function joinCommand(
  argv: string[],
  deps: { logger: Logger; runAgent(opts: AgentOptions): Promise<void> },
): Promise<number> {
  let cmd: JoinCommand | 'help';
  try {
    cmd = parseJoinCommand(argv);
  } catch (e) {
    process.stderr.write(`mesh-agent join: ${(e as Error).message}\n\n${JOIN_USAGE}`);
    return EXIT_USAGE;
  }
  if (cmd === 'help') {
    process.stdout.write(JOIN_USAGE);
    return 0;
  }
  try {
    const joined = await joinMesh({ ...cmd, logger: deps.logger });
    if (!cmd.run) {
      process.stdout.write(
        `Joined the mesh at ${joined.server} as node ${joined.nodeName}. Run the agent with:\n  mesh-agent run --state-dir ${cmd.stateDir}\n`,
      );
      return 0;
    }
  } catch (e) {
    process.stderr.write(`mesh-agent join: ${(e as Error).message}\n`);
    return 1;
  }
  process.title = cmd.runLine; // the token leaves /proc/<pid>/cmdline: the agent runs on as `mesh-agent run`
  await deps.runAgent(cmd.run);
  return 0;
}
