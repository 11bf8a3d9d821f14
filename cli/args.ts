/**
 * A small kubectl-like argument parser: `--flag value`, `--flag=value`, `-o yaml`, `-oyaml`, `-o=yaml`,
 * boolean `-w`/`--watch[=true|false]`, grouped short booleans (`-wR`), repeatable flags, `--` ends flags.
 * Flags may appear anywhere among the positional arguments.
 */
import { UsageError } from './errors.ts';

/** One flag a command accepts. */
export interface FlagSpec {
  name: string;
  short?: string;
  /** `strings` may be repeated (and is collected in order). */
  type: 'boolean' | 'string' | 'strings';
  /** Value placeholder in help, e.g. `FILE`. */
  arg?: string;
  help: string;
  /** Allowed values for a string flag. */
  values?: string[];
}

/** The parsed command line of one command. */
export class ParsedArgs {
  constructor(readonly positionals: string[], private readonly values: Map<string, string | boolean | string[]>) {}

  /** The value of a string flag, or undefined. */
  str(name: string): string | undefined {
    const v = this.values.get(name);
    return typeof v === 'string' ? v : undefined;
  }

  /** Whether a boolean flag is set. */
  bool(name: string): boolean {
    return this.values.get(name) === true;
  }

  /** Every value of a repeatable flag, in order. */
  list(name: string): string[] {
    const v = this.values.get(name);
    return Array.isArray(v) ? v : [];
  }
}

/** Parses `argv` (the words after the command name) against the command's flags. */
export function parseArgs(argv: string[], specs: FlagSpec[]): ParsedArgs {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.short).map((s) => [s.short as string, s]));
  const values = new Map<string, string | boolean | string[]>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      const name = word.slice(2, eq < 0 ? undefined : eq);
      const spec = byName.get(name);
      if (!spec) throw new UsageError(`unknown flag: --${name}`);
      i = take(spec, eq < 0 ? undefined : word.slice(eq + 1), argv, i, values, `--${name}`);
    } else if (word.startsWith('-') && word.length > 1) {
      i = parseShort(word, argv, i, byShort, values);
    } else {
      positionals.push(word);
    }
  }
  return new ParsedArgs(positionals, values);
}

function parseShort(word: string, argv: string[], i: number, byShort: Map<string, FlagSpec>, values: Map<string, string | boolean | string[]>): number {
  for (let j = 1; j < word.length; j++) {
    const spec = byShort.get(word[j]);
    if (!spec) throw new UsageError(`unknown shorthand flag: '${word[j]}' in ${word}`);
    if (spec.type === 'boolean') {
      values.set(spec.name, true);
      continue;
    }
    const rest = word.slice(j + 1).replace(/^=/, '');
    return take(spec, rest || undefined, argv, i, values, `-${word[j]}`);
  }
  return i;
}

/** Stores one flag's value; returns the index of the last word consumed. */
function take(spec: FlagSpec, inline: string | undefined, argv: string[], i: number, values: Map<string, string | boolean | string[]>, shown: string): number {
  if (spec.type === 'boolean') {
    if (inline !== undefined && inline !== 'true' && inline !== 'false') {
      throw new UsageError(`invalid argument "${inline}" for "${shown}" flag: expected true or false`);
    }
    values.set(spec.name, inline !== 'false');
    return i;
  }
  let value = inline;
  if (value === undefined) {
    if (i + 1 >= argv.length) throw new UsageError(`flag needs an argument: ${shown}`);
    value = argv[++i];
  }
  if (spec.values && !spec.values.includes(value)) {
    throw new UsageError(`invalid argument "${value}" for "${shown}" flag: must be one of ${spec.values.join(', ')}`);
  }
  if (spec.type === 'strings') values.set(spec.name, [...((values.get(spec.name) as string[] | undefined) ?? []), value]);
  else values.set(spec.name, value);
  return i;
}
