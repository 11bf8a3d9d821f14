/**
 * What a meshctl command is: its usage, flags and `run`. Each command lives in its own file and is loaded
 * only when it runs (see the command map in main.ts).
 */
import type { HttpClient } from '../api/client/http-client.ts';
import type { FlagSpec, ParsedArgs } from '../api/meta/flags.ts';

/** What a command gets when it runs. */
export interface CommandContext {
  args: ParsedArgs;
  /** The client for the configured control plane (the meshconfig is read on first use). */
  client(): HttpClient;
  /** Writes to stdout. */
  out(text: string): void;
  /** Writes to stderr. */
  err(text: string): void;
  /** Called when the process is asked to stop (SIGINT/SIGTERM); long-running commands hook it. */
  onStop(fn: () => void): void;
}

/** One command. */
export interface Command {
  /** e.g. `get <resource> [name...]` */
  usage: string;
  /** One paragraph shown by `-h`. */
  description: string;
  examples?: string[];
  flags: FlagSpec[];
  /** Runs the command; resolves with the exit code. */
  run(ctx: CommandContext): Promise<number>;
}

/** Flags every command accepts. */
export const GLOBAL_FLAGS: FlagSpec[] = [
  {
    name: 'config',
    type: 'string',
    arg: 'FILE',
    help: 'the meshconfig to use (default: $MESHCONFIG, ./.meshctl/…/admin.meshconfig, ~/.meshctl/config)',
  },
  { name: 'help', short: 'h', type: 'boolean', help: 'help for this command' },
];

/** Common flags, shared by the commands that take them. */
export const FLAGS = {
  output: (values: string[]): FlagSpec => ({
    name: 'output',
    short: 'o',
    type: 'string',
    arg: 'FORMAT',
    values,
    help: `output format: ${values.join('|')}`,
  }),
  selector: {
    name: 'selector',
    short: 'l',
    type: 'string',
    arg: 'SELECTOR',
    help: 'label selector, e.g. -l site=home,role!=edge',
  } as FlagSpec,
  fieldSelector: {
    name: 'field-selector',
    type: 'string',
    arg: 'SELECTOR',
    help: 'field selector, e.g. --field-selector spec.node=a',
  } as FlagSpec,
  filename: {
    name: 'filename',
    short: 'f',
    type: 'strings',
    arg: 'FILE|DIR|-',
    help: 'manifest file, directory or - for stdin (repeatable)',
  } as FlagSpec,
  recursive: {
    name: 'recursive',
    short: 'R',
    type: 'boolean',
    help: 'process directories given with -f recursively',
  } as FlagSpec,
  dryRun: {
    name: 'dry-run',
    type: 'string',
    arg: 'none|server',
    values: ['none', 'server'],
    help: 'server: the server validates and computes the result without persisting it',
  } as FlagSpec,
};

/** Renders a command's `-h` text. */
export function commandHelp(cmd: Command): string {
  const flags = [...cmd.flags, ...GLOBAL_FLAGS].map((f) => {
    const names = `${f.short ? `-${f.short}, ` : '    '}--${f.name}${f.type === 'boolean' ? '' : ` ${f.arg ?? 'VALUE'}`}`;
    return `  ${names.padEnd(34)} ${f.help ?? ''}`;
  });
  const examples = cmd.examples?.length ? `\nExamples:\n${cmd.examples.map((e) => `  ${e}`).join('\n')}\n` : '';
  return `${cmd.description}\n\nUsage:\n  meshctl ${cmd.usage}\n${examples}\nFlags:\n${flags.join('\n')}\n`;
}
