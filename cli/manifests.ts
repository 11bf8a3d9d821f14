/**
 * Loads manifests for `apply`, `delete -f` and `diff -f`: files, directories (`*.yaml`, `*.yml`, `*.json`
 * in file-name order, recursive with `-R`) and `-` for stdin; multi-document YAML, JSON objects, JSON
 * arrays and `kind: List`. A file that does not parse yields one error naming its line and no objects.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { KubeObject } from '../api/meta/types.ts';
import { CliError } from './errors.ts';
import { yaml } from './yaml.ts';

/** One object read from a manifest, with where it came from (for messages). */
export interface ManifestDoc {
  /** The file path, or `STDIN`. */
  source: string;
  /** 1-based document number within the file. */
  index: number;
  object: KubeObject;
}

/** A problem with one file or one document; `index` is absent when the whole file failed. */
export interface ManifestProblem {
  source: string;
  index?: number;
  message: string;
}

/** Everything read from the given `-f` arguments, in order. */
export interface LoadedManifests {
  docs: ManifestDoc[];
  problems: ManifestProblem[];
}

const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** Lists the files named by `-f` arguments; a path that does not exist or a directory that cannot be read is a CliError (nothing is applied). */
export function expandPaths(paths: string[], recursive: boolean): string[] {
  const files: string[] = [];
  for (const p of paths) {
    if (p === '-') {
      files.push('-');
      continue;
    }
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      throw new CliError(`the path "${p}" does not exist`);
    }
    if (isDir) files.push(...listDir(p, recursive));
    else files.push(p);
  }
  return files;
}

function listDir(dir: string, recursive: boolean): string[] {
  const out: string[] = [];
  for (const name of unreadable(dir, () => readdirSync(dir).sort())) {
    const p = join(dir, name);
    if (unreadable(p, () => statSync(p).isDirectory())) {
      if (recursive) out.push(...listDir(p, recursive));
    } else if (EXTENSIONS.has(extname(name).toLowerCase())) {
      out.push(p);
    }
  }
  return out;
}

/** Runs a read of `path`; its failure (EACCES, a dangling link) is a CliError naming the path. */
function unreadable<T>(path: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    throw new CliError(`cannot read "${path}": ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** Reads and parses every manifest named by `-f` arguments. */
export async function loadManifests(
  paths: string[],
  opts: { recursive?: boolean; stdin?: () => string } = {},
): Promise<LoadedManifests> {
  const result: LoadedManifests = { docs: [], problems: [] };
  for (const file of expandPaths(paths, opts.recursive ?? false)) {
    const source = file === '-' ? 'STDIN' : file;
    const text = file === '-' ? (opts.stdin ?? (() => readFileSync(0, 'utf8')))() : readFileSync(file, 'utf8');
    const parsed = await parseManifestText(text, source, file !== '-' && extname(file).toLowerCase() === '.json');
    result.docs.push(...parsed.docs);
    result.problems.push(...parsed.problems);
  }
  return result;
}

/** Parses one file's text; on a syntax error returns only that error. */
export async function parseManifestText(text: string, source: string, json = false): Promise<LoadedManifests> {
  let values: unknown[];
  try {
    values = json ? [parseJson(text)] : await parseYamlDocs(text);
  } catch (e) {
    const where = json ? jsonErrorLocation(text) : '';
    const message = (e as Error).message
      .replace(/, (".*"|\.\.\.".*) is not valid JSON$/s, '')
      .replace(/ at position \d+$/, '')
      .replace(/ in JSON$/, '');
    return { docs: [], problems: [{ source, message: `error parsing ${source}: ${where}${message}` }] };
  }
  const out: LoadedManifests = { docs: [], problems: [] };
  values.forEach((value, i) => collect(value, source, i + 1, out));
  return out;
}

function parseJson(text: string): unknown {
  return text.trim() ? JSON.parse(text) : null;
}

/** Every YAML document's value; throws an Error whose message starts with `line L, column C:`. */
async function parseYamlDocs(text: string): Promise<unknown[]> {
  const docs = yaml().parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [];
  for (const doc of list) {
    const err = doc.errors[0];
    if (!err) continue;
    const pos = err.linePos?.[0];
    const msg = err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    throw new Error(pos ? `line ${pos.line}, column ${pos.col}: ${msg}` : msg);
  }
  return list.map((d) => d.toJS({ maxAliasCount: 100 }));
}

/**
 * Where a JSON syntax error is (`line L, column C: `), which JSON.parse does not always say on Node 20:
 * the shortest prefix of the text that fails with an error other than "the input ended" ends at the bad character.
 */
function jsonErrorLocation(text: string): string {
  const failsInside = (len: number): boolean => {
    try {
      JSON.parse(text.slice(0, len));
      return false;
    } catch (e) {
      const msg = (e as Error).message;
      const pos = /at position (\d+)/.exec(msg);
      return !/end of JSON input/.test(msg) && !(pos && Number(pos[1]) >= len);
    }
  };
  let lo = 1;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (failsInside(mid)) hi = mid;
    else lo = mid + 1;
  }
  const before = text.slice(0, failsInside(text.length) ? lo - 1 : text.trimEnd().length).split('\n');
  return `line ${before.length}, column ${before[before.length - 1].length + 1}: `;
}

/** Adds one parsed value: an object, a JSON array of objects, or a `List`; empty documents are skipped. */
function collect(value: unknown, source: string, index: number, out: LoadedManifests): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) {
    for (const item of value) collect(item, source, index, out);
    return;
  }
  if (typeof value !== 'object') {
    out.problems.push({ source, index, message: `document ${index} is not an object` });
    return;
  }
  const obj = value as Record<string, unknown>;
  if (typeof obj.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(obj.items)) {
    for (const item of obj.items) collect(item, source, index, out);
    return;
  }
  if (!isAddressable(obj)) {
    const missing = missingFields(obj)
      .map((m) => `${m} not set`)
      .join(', ');
    out.problems.push({ source, index, message: `error validating data: ${missing}` });
    return;
  }
  out.docs.push({ source, index, object: obj });
}

/** The fields the CLI needs to address an object that `obj` lacks: apiVersion, kind, metadata.name. */
function missingFields(obj: Record<string, unknown>): string[] {
  const missing = ['apiVersion', 'kind'].filter((k) => typeof obj[k] !== 'string' || !obj[k]);
  const meta = obj.metadata as { name?: unknown } | undefined;
  if (typeof meta?.name !== 'string' || !meta.name) missing.push('metadata.name');
  return missing;
}

/** True when `obj` names its apiVersion, kind and metadata.name (the server validates the rest against its schema). */
function isAddressable(obj: Record<string, unknown>): obj is KubeObject {
  return missingFields(obj).length === 0;
}
