/**
 * `meshctl __complete -- WORD...` (hidden): the candidates for the last WORD, one per line, for the scripts
 * that `meshctl completion bash|zsh` prints (kubectl's `__complete` protocol, simplified). A last line
 * `:files` asks the shell to complete a file name instead. Object names come from the control plane at
 * completion time; when it cannot be reached (or no meshconfig is found) no names are offered and nothing
 * is printed on stderr, which would garble the prompt. It always exits 0.
 */
import { createClient } from '../api/client/http-client.ts';
import type { Command, CommandContext } from './command.ts';
import { complete, type CompletionSources } from './complete-words.ts';
import { loadConfig } from './config.ts';
import { EXIT_OK } from './errors.ts';

/** The command map of main.ts, as far as completion reads it. */
export type CommandTable = Record<string, { hidden?: boolean; load: () => Promise<{ command: Command }> }>;

/** A control plane that does not answer within this is left out of the completion. */
const NAMES_TIMEOUT_MS = 2000;

/** The `__complete` command over the given command map. */
export function completeCommand(table: CommandTable): { command: Command } {
  return {
    command: {
      usage: '__complete -- WORD...',
      description: 'Print the completions of the last WORD, one per line (used by the completion scripts).',
      flags: [],
      run: (ctx) => run(ctx, table),
    },
  };
}

async function run(ctx: CommandContext, table: CommandTable): Promise<number> {
  const words = ctx.args.positionals;
  const sources: CompletionSources = {
    commands: [...Object.keys(table).filter((n) => !table[n].hidden), 'help'],
    flags: async (name) => {
      if (name === 'help') return [];
      if (!Object.hasOwn(table, name) || table[name].hidden) return undefined;
      return (await table[name].load()).command.flags;
    },
    names: (plural) => names(plural, configFlag(words.slice(0, -1)) ?? ctx.args.str('config')),
  };
  try {
    const { candidates, files } = await complete(words.length ? words : [''], sources);
    ctx.out(candidates.map((c) => `${c}\n`).join('') + (files ? ':files\n' : ''));
  } catch {
    // A completion that fails offers nothing; an error message would land in the middle of the prompt.
  }
  return EXIT_OK;
}

/** The names of a kind's objects, or none when the control plane (or a meshconfig) is not there. */
async function names(plural: string, config: string | undefined): Promise<string[]> {
  let client;
  try {
    client = createClient({ ...loadConfig({ flag: config }), timeoutMs: NAMES_TIMEOUT_MS });
    const list = await client.list(plural);
    return list.items.flatMap((o) => o.metadata.name ?? []);
  } catch {
    return [];
  } finally {
    client?.close();
  }
}

/** The value of `--config FILE` or `--config=FILE` among the words typed so far. */
function configFlag(words: string[]): string | undefined {
  let found: string | undefined;
  words.forEach((w, i) => {
    if (w === '--config' && i + 1 < words.length) found = words[i + 1];
    else if (w.startsWith('--config=')) found = w.slice('--config='.length);
  });
  return found;
}
