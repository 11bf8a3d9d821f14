/**
 * What `meshctl __complete` offers for the word under the cursor: commands, flags, flag values, resource
 * types and object names. It decides from the words alone; the two lookups it needs (a command's flags, the
 * names of a kind's objects) are given to it, so complete.ts does the I/O and this file is tested without it.
 */
import type { FlagSpec } from '../api/meta/flags.ts';
import { KINDS, resolveResource } from '../api/v1alpha1/kinds.ts';
import { GLOBAL_FLAGS } from './command.ts';

/** The lookups behind a completion. */
export interface CompletionSources {
  /** The commands to offer, in help order. */
  commands: string[];
  /** The flags a command takes besides the global ones; undefined for an unknown command. */
  flags(command: string): Promise<FlagSpec[] | undefined>;
  /** The names of a kind's objects (by plural); [] when the control plane does not answer. */
  names(plural: string): Promise<string[]>;
}

/** The candidates for the current word, or `files`: let the shell complete a file name. */
export interface Completion {
  candidates: string[];
  files: boolean;
}

/** Completes the positional arguments of one command: `prev` are those before the current word. */
type PositionalCompleter = (prev: string[], cur: string, s: CompletionSources) => Promise<string[]>;

const none: Completion = { candidates: [], files: false };

/** Completes the last of `words` (the words after `meshctl`; the last one is the word under the cursor). */
export async function complete(words: string[], s: CompletionSources): Promise<Completion> {
  const cur = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const at = before.findIndex((w, i) => !w.startsWith('-') && before[i - 1] !== '--config');
  if (at < 0) return withPrefix(cur, await scan(before, GLOBAL_FLAGS, cur, () => Promise.resolve(s.commands)));
  const command = before[at];
  const flags = await s.flags(command);
  const positional = Object.hasOwn(POSITIONALS, command) ? POSITIONALS[command] : undefined;
  if (!flags) return none;
  return withPrefix(
    cur,
    await scan(before.slice(at + 1), [...flags, ...GLOBAL_FLAGS], cur, (prev) =>
      positional ? positional(prev, cur, s) : Promise.resolve([]),
    ),
  );
}

/** Reads the words after the command: the current word is a flag's value, a flag, or a positional argument. */
async function scan(
  args: string[],
  specs: FlagSpec[],
  cur: string,
  positional: (prev: string[]) => Promise<string[]>,
): Promise<Completion> {
  const prev: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i];
    if (w === '--') {
      prev.push(...args.slice(i + 1));
      break;
    }
    if (!w.startsWith('-') || w === '-') {
      prev.push(w);
      continue;
    }
    const spec = valueFlag(w, specs);
    if (spec && i + 1 === args.length) return valueOf(spec, cur);
    if (spec) i++;
  }
  if (cur.startsWith('-') && !args.includes('--')) return { candidates: flagNames(specs), files: false };
  return { candidates: await positional(prev), files: false };
}

/** The flag whose value is the next word (`--config`, `-o`, `-lo`), or undefined. */
function valueFlag(word: string, specs: FlagSpec[]): FlagSpec | undefined {
  if (word.startsWith('--')) {
    const spec = specs.find((f) => f.name === word.slice(2));
    return spec && spec.type !== 'boolean' ? spec : undefined;
  }
  for (let j = 1; j < word.length; j++) {
    const spec = specs.find((f) => f.short === word[j]);
    if (!spec) return undefined;
    if (spec.type !== 'boolean') return j === word.length - 1 ? spec : undefined;
  }
  return undefined;
}

/** The values a flag takes: its listed ones, a file name, or nothing to offer. */
function valueOf(spec: FlagSpec, cur: string): Completion {
  if (spec.values) return { candidates: spec.values, files: false };
  return /FILE|DIR/.test(spec.arg ?? '') && cur !== '-' ? { candidates: [], files: true } : none;
}

function flagNames(specs: FlagSpec[]): string[] {
  return specs.flatMap((f) => [`--${f.name}`, ...(f.short ? [`-${f.short}`] : [])]);
}

function withPrefix(cur: string, c: Completion): Completion {
  return { candidates: [...new Set(c.candidates.filter((x) => x.startsWith(cur)))], files: c.files };
}

/** Every word that names a kind: plural, singular and short names, in registry order. */
function kindWords(): string[] {
  return KINDS.flatMap((k) => [k.plural, k.singular, ...k.shortNames]);
}

/** `<type>[,<type>] [name...]` and `<type>/<name>...`, as parseTargets in resources.ts reads them. */
function resources(opts: { allowAll: boolean }): PositionalCompleter {
  return async (prev, cur, s) => {
    const slash = cur.indexOf('/');
    if (slash >= 0) {
      const kind = resolveResource(cur.slice(0, slash));
      return kind ? (await s.names(kind.plural)).map((n) => `${cur.slice(0, slash)}/${n}`) : [];
    }
    if (prev.length === 0) {
      const head = cur.slice(0, cur.lastIndexOf(',') + 1);
      return [...kindWords(), ...(opts.allowAll ? ['all'] : [])].map((w) => head + w);
    }
    const kind = prev[0].includes(',') || prev[0].includes('/') ? undefined : resolveResource(prev[0]);
    return kind ? (await s.names(kind.plural)).filter((n) => !prev.includes(n)) : [];
  };
}

const first =
  (values: (s: CompletionSources) => string[] | Promise<string[]>): PositionalCompleter =>
  async (prev, _cur, s) =>
    prev.length === 0 ? values(s) : [];

/** The positional arguments of each command that has any worth completing. */
const POSITIONALS: Record<string, PositionalCompleter> = {
  get: resources({ allowAll: true }),
  describe: resources({ allowAll: false }),
  delete: resources({ allowAll: false }),
  wait: resources({ allowAll: false }),
  logs: first((s) => s.names('nodes')),
  token: async (prev, _cur, s) =>
    prev.length === 0 ? ['create', 'list', 'delete'] : prev[0] === 'delete' ? s.names('jointokens') : [],
  backup: async (prev, _cur, s) =>
    prev.length === 0
      ? ['create', 'pull', 'list', 'verify', 'restore']
      : prev[0] === 'pull' && prev.length === 1
        ? s.names('backups')
        : [],
  completion: first(() => ['bash', 'zsh']),
  help: first((s) => s.commands),
};
