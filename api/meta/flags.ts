/**
 * The command-line parser of all three programs (`meshctl`, `mesh-agent`, `mesh-control-plane`), kubectl-like:
 * `--flag value`, `--flag=value`, `-o yaml`, `-oyaml`, `-o=yaml`, boolean `-w`/`--watch[=true|false]`,
 * grouped short booleans (`-wR`), repeatable flags, `--` ends flags. Flags may appear anywhere among the
 * positional arguments; a program that takes none checks `positionals` itself. Every mistake is a UsageError.
 */
import { UsageError } from './usage-error.ts';

/** One flag a command accepts. */
export interface FlagSpec {
  name: string;
  short?: string;
  /** `strings` may be repeated (and is collected in order). */
  type: 'boolean' | 'string' | 'strings';
  /** Value placeholder in help, e.g. `FILE`. */
  arg?: string;
  /** The line in meshctl's generated `-h`; programs with a written usage text leave it out. */
  help?: string;
  /** Allowed values for a string flag. */
  values?: string[];
}

/** The parsed command line of one command. */
export class ParsedArgs {
  constructor(
    readonly positionals: string[],
    private readonly values: Map<string, string | boolean | string[]>,
  ) {}

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

/** Options of `parseArgs`. */
export interface ParseArgsOptions {
  /**
   * The message for an unknown flag (`--name`, or `-x` of a group); by default kubectl's `unknown flag: --name`
   * and `unknown shorthand flag: 'x' in -xy`.
   */
  unknownFlag?: (flag: string) => string;
}

/** node:util parseArgs' wording of an unknown flag, which mesh-agent and mesh-control-plane have always printed. */
export function unknownOption(flag: string): string {
  return `Unknown option '${flag}'`;
}

/** Refuses positional arguments, for a program that takes none (node:util parseArgs' wording, as unknownOption). */
export function refusePositionals(args: ParsedArgs): void {
  const extra = args.positionals[0];
  if (extra !== undefined)
    throw new UsageError(`Unexpected argument '${extra}'. This command does not take positional arguments`);
}

/** Parses `argv` (the words after the command name) against the command's flags. */
export function parseArgs(argv: string[], specs: FlagSpec[], opts: ParseArgsOptions = {}): ParsedArgs {
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
      if (!spec) throw new UsageError(opts.unknownFlag?.(`--${name}`) ?? `unknown flag: --${name}`);
      i = take(spec, eq < 0 ? undefined : word.slice(eq + 1), argv, i, values, `--${name}`);
    } else if (word.startsWith('-') && word.length > 1) {
      i = parseShort(word, argv, i, byShort, values, opts);
    } else {
      positionals.push(word);
    }
  }
  return new ParsedArgs(positionals, values);
}

function parseShort(
  word: string,
  argv: string[],
  i: number,
  byShort: Map<string, FlagSpec>,
  values: Map<string, string | boolean | string[]>,
  opts: ParseArgsOptions,
): number {
  for (let j = 1; j < word.length; j++) {
    const spec = byShort.get(word[j]);
    if (!spec)
      throw new UsageError(opts.unknownFlag?.(`-${word[j]}`) ?? `unknown shorthand flag: '${word[j]}' in ${word}`);
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
function take(
  spec: FlagSpec,
  inline: string | undefined,
  argv: string[],
  i: number,
  values: Map<string, string | boolean | string[]>,
  shown: string,
): number {
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
  if (spec.type === 'strings')
    values.set(spec.name, [...((values.get(spec.name) as string[] | undefined) ?? []), value]);
  else values.set(spec.name, value);
  return i;
}
