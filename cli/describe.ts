/**
 * `meshctl describe`: an object for people — name, labels, annotations, metadata, spec and status as
 * indented fields, conditions as a table, and the object's recent events; a Node also its overlay paths
 * (describe-node.ts).
 */
import type { Client } from '../api/client/types.ts';
import { isReason } from '../api/meta/api-error.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { KindInfo } from '../api/v1alpha1/kind-info.ts';
import { FLAGS, type Command, type CommandContext } from './command.ts';
import { EXIT_FAILED, EXIT_OK, formatError, shortenGroup } from './errors.ts';
import { LAST_APPLIED } from './apply-object.ts';
import { eventTime, eventsTable, labelWidth, renderFields, type EventLike } from './printers/describe-fields.ts';
import { parseTargets } from './resources.ts';
import { overlayPathsSection } from './describe-node.ts';
import type { Node } from '../api/v1alpha1/generated/index.ts';

/** The `describe` command. */
export const command: Command = {
  usage: 'describe <resource> [name...] | describe <resource>/<name>... [flags]',
  description:
    'Show details of objects: metadata, spec, status, conditions and recent events. Without a name, describes every object of the kind (or those matching -l).',
  examples: ['meshctl describe node node-a', 'meshctl describe certificates -l app=web'],
  flags: [FLAGS.selector],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  const client = ctx.client();
  const blocks: string[] = [];
  let failed = false;
  for (const { kind, names } of parseTargets(ctx.args.positionals)) {
    let objects: KubeObject[] = [];
    if (!names.length) {
      objects = (await client.list(kind.plural, { labelSelector: ctx.args.str('selector') })).items;
      if (!objects.length) ctx.err('No resources found\n');
    }
    for (const name of names) {
      try {
        objects.push(await client.get(kind.plural, name));
      } catch (e) {
        if (!isReason(e, 'NotFound')) throw e;
        ctx.err(formatError(e) + '\n');
        failed = true;
      }
    }
    for (const obj of objects) blocks.push(await describeObject(client, kind, obj));
  }
  ctx.out(blocks.join('\n\n'));
  return failed ? EXIT_FAILED : EXIT_OK;
}

/** The whole describe text of one object, ending with a newline. */
export async function describeObject(
  client: Client,
  kind: KindInfo,
  obj: KubeObject,
  now = Date.now(),
): Promise<string> {
  const meta = obj.metadata ?? {};
  const annotations = Object.fromEntries(Object.entries(meta.annotations ?? {}).filter(([k]) => k !== LAST_APPLIED));
  const rest = Object.fromEntries(Object.entries(obj).filter(([k]) => !['apiVersion', 'kind', 'metadata'].includes(k)));
  const scalarKeys = Object.keys(rest).filter((k) => typeof rest[k] !== 'object' || rest[k] === null);
  const width = Math.max(14, labelWidth(scalarKeys));
  const head = [
    ['Name:', meta.name ?? ''],
    ['Labels:', keyValues(meta.labels, width)],
    ['Annotations:', keyValues(annotations, width)],
    ['API Version:', obj.apiVersion],
    ['Kind:', obj.kind],
  ].map(([k, v]) => `${k.padEnd(width)}${v}`);
  const metadata = {
    creationTimestamp: meta.creationTimestamp,
    deletionTimestamp: meta.deletionTimestamp,
    generation: meta.generation,
    resourceVersion: meta.resourceVersion,
    uid: meta.uid,
    ownerReferences: meta.ownerReferences?.map((o) => `${o.kind}/${o.name}${o.controller ? ' (controller)' : ''}`),
    finalizers: meta.finalizers,
  };
  const body = renderFields({ metadata, ...rest }, 0, width);
  const paths = kind.kind === 'Node' ? await overlayPathsSection(client, obj as Node) : '';
  const events = kind.plural === 'events' ? [] : ['Events:' + (await eventsSection(client, kind, obj, now))];
  return [...head, ...body, ...(paths ? [paths.slice(1)] : []), ...events].join('\n') + '\n';
}

/** Labels or annotations, `key=value` one per line aligned under the first, or `<none>`. */
function keyValues(map: Record<string, string> | undefined, width: number): string {
  const entries = Object.entries(map ?? {});
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(`\n${' '.repeat(width)}`) : '<none>';
}

async function eventsSection(client: Client, kind: KindInfo, obj: KubeObject, now: number): Promise<string> {
  let events: EventLike[];
  try {
    const fieldSelector = `involvedObject.name=${obj.metadata.name},involvedObject.kind=${kind.kind}`;
    events = (await client.list('events', { fieldSelector })).items;
  } catch (e) {
    return `  <unable to list events: ${shortenGroup((e as Error).message)}>`;
  }
  if (!events.length) return '  <none>';
  events.sort((a, b) => (Date.parse(eventTime(a) ?? '') || 0) - (Date.parse(eventTime(b) ?? '') || 0));
  return '\n' + eventsTable(events, 2, now).join('\n');
}
