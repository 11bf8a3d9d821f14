/**
 * `meshctl wait --for=condition=TYPE[=STATUS] | --for=jsonpath={PATH}[=VALUE] | --for=delete [--timeout=30s]
 * KIND/NAME... | KIND NAME... | KIND -l SELECTOR | KIND --all`, as kubectl wait: each object is followed with the
 * list-then-watch loop of api/client/list-watch.ts (so a dropped watch or an expired resourceVersion does not lose
 * the change) until its condition holds (`node/a condition met`) or it is gone (`node/a deleted`). A condition is
 * met when its type and status match case-insensitively, as kubectl's, and its observedGeneration (when set) is
 * not older than the object's generation; a jsonpath when the value there, as text, is VALUE (without VALUE: when
 * there is one). Exit code 0 when every object got there, 1 on a timeout (`timed out waiting for the condition
 * on nodes/a`), an object to wait on that does not exist, or a selector matching none.
 */
import { isUnreachable } from '../api/client/http-transport.ts';
import { startListWatch } from '../api/client/list-watch.ts';
import { ApiError } from '../api/meta/api-error.ts';
import { realClock } from '../api/meta/clock.ts';
import { parseDuration } from '../api/meta/duration.ts';
import type { Condition, KubeObject } from '../api/meta/types.ts';
import type { KindInfo } from '../api/v1alpha1/kind-info.ts';
import { evalJsonPath, parseJsonPath } from '../api/v1alpha1/json-path.ts';
import { FLAGS, type Command, type CommandContext } from './command.ts';
import { CliError, EXIT_OK, UsageError } from './errors.ts';
import { parseTargets } from './resources.ts';

/** What `--for` asks for. */
export type WaitFor =
  | { type: 'delete' }
  | { type: 'condition'; condition: string; status: string }
  | { type: 'jsonpath'; path: string; value?: string };

/** The `wait` command. */
export const command: Command = {
  usage:
    'wait (KIND/NAME... | KIND NAME... | KIND -l SELECTOR | KIND --all) --for=delete|condition=TYPE[=STATUS]|jsonpath={PATH}[=VALUE]',
  description:
    'Wait until objects have a condition (status True unless given), a field has a value, or they are deleted. Exit code 0 when all of them did, 1 on a timeout or an object that does not exist.',
  examples: [
    'meshctl wait --for=condition=Applied assignment/greeter-on-node-a',
    'meshctl wait --for=condition=Reachable=False node node-b --timeout=2m',
    'meshctl wait --for=condition=Applied assignments -l app=web',
    'meshctl wait --for=delete node/old --timeout=60s',
    "meshctl wait --for=jsonpath='{.spec.site}'=office node/node-a",
  ],
  flags: [
    {
      name: 'for',
      type: 'string',
      arg: 'CONDITION',
      help: 'delete, condition=TYPE[=STATUS] (STATUS: True), or jsonpath={PATH}[=VALUE] (no VALUE: the path is set)',
    },
    { name: 'timeout', type: 'string', arg: 'DURATION', help: 'how long to wait in all (default 30s)' },
    FLAGS.selector,
    { name: 'all', type: 'boolean', help: 'every object of the kind' },
  ],
  run,
};

/** Parses `--for`: `delete`, `condition=TYPE[=STATUS]` or `jsonpath={PATH}[=VALUE]`. */
export function parseFor(text: string | undefined): WaitFor {
  if (text === undefined) throw new UsageError('--for is required: delete, condition=TYPE[=STATUS] or jsonpath=…');
  if (text.toLowerCase() === 'delete') return { type: 'delete' };
  if (text.startsWith('jsonpath=')) return parseJsonPathFor(text.slice('jsonpath='.length));
  const m = /^condition=([^=]+)(?:=(.*))?$/.exec(text);
  if (!m) throw new UsageError(`unrecognized condition: "${text}"`);
  return { type: 'condition', condition: m[1], status: m[2] ?? 'True' };
}

/** `{.status.x}=value` or `{.status.x}` (kubectl's form; the braces end the path, so it may hold `==`). */
function parseJsonPathFor(text: string): WaitFor {
  const m = /^(\{.*?\})(?:=(.*))?$/.exec(text) ?? /^([^=]+)(?:=(.*))?$/.exec(text);
  if (!m) throw new UsageError(`unrecognized jsonpath: "${text}"`);
  try {
    parseJsonPath(m[1]);
  } catch (e) {
    throw new UsageError(`--for=jsonpath: ${(e as Error).message}`);
  }
  return { type: 'jsonpath', path: m[1], value: m[2] };
}

/** Whether `obj` (undefined: absent) is what `want` waits for (pure). */
export function satisfied(obj: KubeObject | undefined, want: WaitFor): boolean {
  if (want.type === 'delete') return obj === undefined;
  if (!obj) return false;
  if (want.type === 'jsonpath') {
    const v = evalJsonPath(obj, want.path);
    if (want.value === undefined) return v !== undefined && v !== null && v !== '';
    return v !== undefined && v !== null && (typeof v === 'object' ? JSON.stringify(v) : String(v)) === want.value;
  }
  const eq = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
  const conditions = (obj.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
  const c = conditions.find((x) => eq(x.type, want.condition));
  if (!c || !eq(c.status, want.status)) return false;
  const generation = obj.metadata.generation;
  return c.observedGeneration === undefined || generation === undefined || c.observedGeneration >= generation;
}

async function run(ctx: CommandContext): Promise<number> {
  const want = parseFor(ctx.args.str('for'));
  const timeoutMs = parseTimeout(ctx.args.str('timeout'));
  const deadline = realClock.now() + timeoutMs;
  const objects: Array<{ kind: KindInfo; name: string }> = [];
  for (const target of parseTargets(ctx.args.positionals)) {
    const names = target.names.length ? target.names : await selected(ctx, target.kind);
    objects.push(...names.map((name) => ({ kind: target.kind, name })));
  }
  for (const { kind, name } of objects) {
    await waitOne(ctx, kind, name, want, deadline);
    ctx.out(`${kind.singular}/${name} ${want.type === 'delete' ? 'deleted' : 'condition met'}\n`);
  }
  return EXIT_OK;
}

function parseTimeout(text: string | undefined): number {
  try {
    return text === undefined ? 30_000 : parseDuration(text, { allowZero: true });
  } catch (e) {
    throw new UsageError(`--timeout: ${(e as Error).message}`);
  }
}

/** The names of a kind's objects matched by `-l` or `--all` (one of them is needed); none is an error. */
async function selected(ctx: CommandContext, kind: KindInfo): Promise<string[]> {
  const labelSelector = ctx.args.str('selector');
  if (!labelSelector && !ctx.args.bool('all'))
    throw new UsageError('resource(s) were provided, but no name was specified: give names, -l SELECTOR or --all');
  const list = await ctx.client().list(kind.plural, { labelSelector });
  if (!list.items.length) throw new CliError('no matching resources found');
  return list.items.map((o) => o.metadata.name as string);
}

/** Follows one object until `want` holds; rejects on the deadline, or NotFound when a condition's object is absent. */
function waitOne(ctx: CommandContext, kind: KindInfo, name: string, want: WaitFor, deadline: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let listed = false;
    const finish = (e?: unknown): void => {
      realClock.clearTimeout(timer);
      void watch.stop().then(() => (e ? reject(e) : resolve()));
    };
    const check = (obj: KubeObject | undefined): void => {
      if (satisfied(obj, want)) finish();
      else if (!obj && !listed && want.type !== 'delete')
        finish(
          new ApiError({ reason: 'NotFound', code: 404, message: `${kind.plural}.meshctl.dev "${name}" not found` }),
        );
      listed = true;
    };
    const watch = startListWatch({
      client: ctx.client(),
      plural: kind.plural,
      fieldSelector: `metadata.name=${name}`,
      backoff: { baseMs: 500, maxMs: 5000 },
      onList: (items) => check(items[0]),
      onEvent: (ev) => check(ev.type === 'DELETED' ? undefined : ev.object),
      onFailure(e) {
        if (!listed || (!isUnreachable(e) && !(e instanceof ApiError && e.code >= 500))) throw e;
      },
    });
    const timer = realClock.setTimeout(
      () => finish(new CliError(`timed out waiting for the condition on ${kind.plural}/${name}`)),
      Math.max(0, deadline - realClock.now()),
    );
    watch.done.catch((e: unknown) => finish(e));
  });
}
