/**
 * The meshctl entry point: finds the command, parses its flags and runs it. Commands are loaded on demand
 * (dynamic import) so that start-up stays close to bare `node`; exit codes are documented in errors.ts.
 */
import type { HttpClient } from '../api/client/http-client.ts';
import { parseArgs } from '../api/meta/flags.ts';
import { clientFor } from './client.ts';
import { GLOBAL_FLAGS, commandHelp, type Command, type CommandContext } from './command.ts';
import { EXIT_OK, UsageError, reportError } from './errors.ts';
import { restoreExtraCaCerts } from './extra-ca.ts';
import { writeStdout } from './stdout.ts';

interface CommandEntry {
  summary: string;
  /** Left out of `--help` and of completion (`__complete`). */
  hidden?: boolean;
  load: () => Promise<{ command: Command }>;
}

/** Every command, in the order `meshctl --help` lists them. */
const COMMANDS: Record<string, CommandEntry> = {
  init: {
    summary: 'Make this machine the control-plane node of a new mesh (run once, before the control plane)',
    load: () => import('./init.ts'),
  },
  get: { summary: 'Display one or many resources', load: () => import('./get.ts') },
  describe: {
    summary: 'Show details of a resource, its conditions and recent events',
    load: () => import('./describe.ts'),
  },
  apply: { summary: 'Create or update resources from manifest files', load: () => import('./apply.ts') },
  delete: { summary: 'Delete resources by name or from manifest files', load: () => import('./delete.ts') },
  diff: { summary: 'Show what apply would change', load: () => import('./diff.ts') },
  wait: { summary: 'Wait for a condition on resources, or for their deletion', load: () => import('./wait.ts') },
  logs: { summary: 'Print the log of a service on a node (-f to follow)', load: () => import('./logs.ts') },
  'api-resources': { summary: 'List the resource types the API serves', load: () => import('./api-resources.ts') },
  status: {
    summary: 'Show the recovery clock: reachability, certificates, deadline, budget, backups (--check for cron)',
    load: () => import('./status.ts'),
  },
  dashboard: {
    summary: "Open the control plane's status page (prints a one-time sign-in link)",
    load: () => import('./dashboard.ts'),
  },
  version: { summary: 'Print the client and server versions', load: () => import('./version.ts') },
  token: {
    summary: 'Create, list and delete join tokens (lets a machine join the mesh)',
    load: () => import('./token.ts'),
  },
  backup: {
    summary: 'Take, pull, list, verify and restore verified backups of the control plane',
    load: () => import('./backup.ts'),
  },
  completion: {
    summary: 'Print a bash or zsh completion script (source <(meshctl completion bash))',
    load: () => import('./completion.ts'),
  },
  __complete: {
    summary: 'Print the completions of the last word (used by the completion scripts)',
    hidden: true,
    load: async () => (await import('./complete.ts')).completeCommand(COMMANDS),
  },
};

/** The top-level `--help` text. */
function rootHelp(): string {
  const shown = Object.entries(COMMANDS).filter(([, c]) => !c.hidden);
  const width = Math.max(...shown.map(([n]) => n.length)) + 3;
  const lines = shown.map(([name, c]) => `  ${name.padEnd(width)}${c.summary}`);
  return [
    'meshctl controls a mesh: one declared control plane, agents that keep running without it.',
    '',
    'Usage:',
    '  meshctl <command> [flags]',
    '',
    'Commands:',
    ...lines,
    '',
    'Global flags:',
    '  --config FILE   the meshconfig to use (default: $MESHCONFIG, ./.meshctl/admin.meshconfig,',
    '                  ./.meshctl/local/control-plane/admin.meshconfig, ./.meshctl/control-plane/admin.meshconfig,',
    '                  ~/.meshctl/config; --kubeconfig is the same flag)',
    '  -h, --help      help for meshctl or a command',
    '  --version       print the client version (meshctl version --client)',
    '',
    "Use 'meshctl <command> --help' for more information about a command.",
    '',
  ].join('\n');
}

/** Splits argv into the command name and everything else (global flags may come before the command). */
function splitCommand(argv: string[]): { name?: string; rest: string[] } {
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i];
    if (w === '--config') i++;
    else if (!w.startsWith('-')) return { name: w, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
  }
  return { rest: argv };
}

function makeContext(command: Command, argv: string[]): { ctx: CommandContext; dispose: () => void } {
  const args = parseArgs(argv, [...command.flags, ...GLOBAL_FLAGS]);
  let client: HttpClient | undefined;
  const ctx: CommandContext = {
    args,
    client: () => (client ??= clientFor(args.str('config'))),
    out: (t) => writeStdout(t),
    err: (t) => void process.stderr.write(t),
    onStop: (fn) => {
      process.once('SIGINT', fn);
      process.once('SIGTERM', fn);
    },
  };
  return { ctx, dispose: () => client?.close() };
}

/** Runs meshctl with the given arguments and resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  // kubectl users type --kubeconfig: the meshconfig is a kubeconfig, so it is the same flag.
  argv = argv.map((w) =>
    w === '--kubeconfig' ? '--config' : w.startsWith('--kubeconfig=') ? `--config=${w.slice(13)}` : w,
  );
  const { name, rest } = splitCommand(argv);
  if (!name && rest.includes('--version')) return main(['version', '--client']);
  if (!name || name === 'help') {
    const topic = name === 'help' ? rest.find((w) => !w.startsWith('-')) : undefined;
    if (topic && COMMANDS[topic]) return main([topic, '--help']);
    if (topic) throw new UsageError(`unknown command "${topic}" for "meshctl"`);
    writeStdout(rootHelp());
    return EXIT_OK;
  }
  const entry = COMMANDS[name];
  if (!entry) throw new UsageError(`unknown command "${name}" for "meshctl"`);
  const { command } = await entry.load();
  const { ctx, dispose } = makeContext(command, rest);
  if (ctx.args.bool('help')) {
    writeStdout(commandHelp(command));
    return EXIT_OK;
  }
  try {
    return await command.run(ctx);
  } finally {
    dispose();
  }
}

restoreExtraCaCerts();
const argv = process.argv.slice(2);
main(argv).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    const name = splitCommand(argv).name;
    process.exitCode = reportError(e, name && COMMANDS[name] ? name : undefined);
  },
);
