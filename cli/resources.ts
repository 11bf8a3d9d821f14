/**
 * Turns command-line resource arguments into kinds and names: `node a b`, `nodes/a module/b`,
 * `nodes,modules`, `all`, and manifest objects into their kind (by apiVersion and kind).
 */
import { didYouMean } from '../api/meta/did-you-mean.ts';
import { API_VERSION, type KubeObject } from '../api/meta/types.ts';
import type { KindInfo } from '../api/v1alpha1/kind-info.ts';
import { KINDS, kindByKind, resolveResource } from '../api/v1alpha1/kinds.ts';
import { CliError, UsageError } from './errors.ts';

/** One kind and the names asked for (empty: all objects of the kind). */
export interface Target {
  kind: KindInfo;
  names: string[];
}

/** The kinds `all` stands for: every kind but events. */
export function allKinds(): KindInfo[] {
  return KINDS.filter((k) => k.plural !== 'events');
}

/** Resolves a resource type (kind, plural, singular or short name, any case); unknown is a CliError like kubectl's. */
export function resolveKind(arg: string): KindInfo {
  const info = resolveResource(arg);
  if (!info) throw new CliError(`the server doesn't have a resource type "${arg}"${didYouMean(arg, resourceNames())}`);
  return info;
}

/** Every name a resource type may be given by: plurals first (the suggested spelling), then singulars, short names. */
function resourceNames(): string[] {
  return [...KINDS.map((k) => k.plural), ...KINDS.map((k) => k.singular), ...KINDS.flatMap((k) => k.shortNames)];
}

/** Parses `<type>[,<type>] [name...]` or `<type>/<name>...` into targets, in order. */
export function parseTargets(args: string[], opts: { allowAll?: boolean } = {}): Target[] {
  if (!args.length)
    throw new UsageError(
      'you must specify the type of resource, e.g. "meshctl get nodes"; see "meshctl api-resources"',
    );
  if (args[0].includes('/')) {
    return args.map((arg) => {
      const slash = arg.indexOf('/');
      if (slash < 0) {
        throw new UsageError(
          `there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'meshctl get resource/<resource_name>' instead of 'meshctl get resource resource/<resource_name>')`,
        );
      }
      const name = arg.slice(slash + 1);
      if (!name) throw new UsageError(`arguments in resource/name form must have a single resource and name: "${arg}"`);
      return { kind: resolveKind(arg.slice(0, slash)), names: [name] };
    });
  }
  const [types, ...names] = args;
  if (names.some((n) => n.includes('/'))) {
    throw new UsageError(
      `there is no need to specify a resource type as a separate argument when passing arguments in resource/name form`,
    );
  }
  const kinds = types
    .split(',')
    .filter(Boolean)
    .flatMap((t) => (opts.allowAll && t.toLowerCase() === 'all' ? allKinds() : [resolveKind(t)]));
  return kinds.map((kind) => ({ kind, names }));
}

/** The kind of a manifest object, checking its apiVersion; unknown is a CliError. */
export function kindOfObject(obj: KubeObject): KindInfo {
  const info = obj.apiVersion === API_VERSION ? kindByKind(obj.kind) : undefined;
  if (!info) throw new CliError(`no matches for kind "${obj.kind}" in version "${obj.apiVersion}"`);
  return info;
}
