/**
 * `meshctl get -w`: prints the current objects, then one row (or document) per change, until SIGINT or
 * SIGTERM, which end it cleanly with exit code 0. It runs the list-then-watch loop of
 * api/client/list-watch.ts: a watch the server closes is reopened from the last resourceVersion seen, an
 * expired one (410) relists, and once it has listed, while the control plane is unreachable (or answers 5xx)
 * it retries with the loop's backoff, saying so once on stderr — as kubectl's watch relists and goes on. Any
 * other error, or a control plane unreachable from the start, ends it.
 *
 * A table prints a row only when what it shows changed: a heartbeat writes a Node's status twice (the agent's
 * report, then the controller's conditions), and the second write changes nothing a row shows. Both rows are
 * rendered at the same instant (ages included), so only a visible difference prints. `-o yaml|json|name`
 * print every event, as kubectl does; `-o json` prints each object on one line (for shell pipelines: `jq -c`,
 * `while read`), and with `--output-watch-events` each event as `{"type":"MODIFIED","object":{…}}`, kubectl's
 * watch-event shape (the objects of the first list are ADDED).
 */
import { isUnreachable } from '../api/client/http-transport.ts';
import { startListWatch } from '../api/client/list-watch.ts';
import { ApiError } from '../api/meta/api-error.ts';
import type { KubeObject, ObjectEvent } from '../api/meta/types.ts';
import type { CommandContext } from './command.ts';
import { EXIT_OK } from './errors.ts';
import { listOptions } from './get.ts';
import { renderObjects } from './printers/output.ts';
import { columnWidths, formatRow, tableHeader, tableRow, type TableOptions } from './printers/table.ts';
import type { Target } from './resources.ts';

/** Prints objects as they change; the table's column widths only ever grow. */
class WatchPrinter {
  private widths: number[] = [];
  private headerDone: boolean;
  /** The last object printed, by uid. */
  private readonly shown = new Map<string, KubeObject>();

  constructor(
    private readonly ctx: CommandContext,
    private readonly target: Target,
    private readonly table: TableOptions,
  ) {
    this.headerDone = ctx.args.bool('no-headers');
  }

  /** Prints the objects whose row differs from the one last printed for them (all of them for yaml, json, name). */
  async printChanged(objects: KubeObject[], type: ObjectEvent['type'] = 'ADDED'): Promise<void> {
    const deleted = type === 'DELETED';
    const now = Date.now();
    const row = (o: KubeObject): string => JSON.stringify(tableRow(this.target.kind, o, { ...this.table, now }));
    const changed = objects.filter((o) => {
      const key = o.metadata?.uid ?? o.metadata?.name ?? '';
      const before = this.shown.get(key);
      if (deleted) this.shown.delete(key);
      else this.shown.set(key, o);
      return deleted || !this.tabular() || before === undefined || row(before) !== row(o);
    });
    if (changed.length) await this.print(changed, type);
  }

  /** After a relist: forgets the objects that are gone (kubectl prints nothing for them either). */
  keepOnly(objects: KubeObject[]): void {
    const keys = new Set(objects.map((o) => o.metadata?.uid ?? o.metadata?.name ?? ''));
    for (const key of this.shown.keys()) if (!keys.has(key)) this.shown.delete(key);
  }

  private tabular(): boolean {
    const output = this.ctx.args.str('output');
    return output !== 'yaml' && output !== 'json' && output !== 'name';
  }

  private async print(objects: KubeObject[], type: ObjectEvent['type']): Promise<void> {
    const output = this.ctx.args.str('output');
    if (output === 'json') {
      const events = this.ctx.args.bool('output-watch-events');
      for (const o of objects) this.ctx.out(JSON.stringify(events ? { type, object: o } : o) + '\n');
      return;
    }
    if (output === 'yaml' || output === 'name') {
      for (const o of objects) {
        const text = await renderObjects([o], output, { single: true, singular: () => this.target.kind.singular });
        this.ctx.out(output === 'yaml' ? `---\n${text}` : text);
      }
      return;
    }
    const rows = objects.map((o) => tableRow(this.target.kind, o, this.table));
    const header = this.headerDone ? [] : [tableHeader(this.target.kind, this.table)];
    this.widths = columnWidths([this.widths.map((w) => ' '.repeat(w)), ...header, ...rows]);
    for (const row of [...header, ...rows]) this.ctx.out(formatRow(row, this.widths));
    this.headerDone = true;
  }
}

/** Runs `get -w` for one kind (and optionally one name). */
export async function watchTarget(ctx: CommandContext, target: Target): Promise<number> {
  const opts = listOptions(ctx.args);
  if (target.names[0])
    opts.fieldSelector = [opts.fieldSelector, `metadata.name=${target.names[0]}`].filter(Boolean).join(',');
  const printer = new WatchPrinter(ctx, target, {
    wide: ctx.args.str('output') === 'wide',
    showLabels: ctx.args.bool('show-labels'),
  });
  let listed = false;
  let contacted = false;
  let lost = false;
  const watch = startListWatch({
    client: ctx.client(),
    plural: target.kind.plural,
    ...opts,
    watchOnly: ctx.args.bool('watch-only'),
    backoff: { baseMs: 500, maxMs: 5000 },
    async onList(items) {
      printer.keepOnly(items);
      if (items.length) await printer.printChanged(items);
      else if (!listed) ctx.err('No resources found\n');
      listed = true;
    },
    onEvent: (event: ObjectEvent) => printer.printChanged([event.object], event.type),
    onContact() {
      contacted = true;
      lost = false;
    },
    onFailure(e) {
      // Unreachable at the start ends it, as any get does; once it has listed, an outage is waited out.
      if (!contacted || (!isUnreachable(e) && !(e instanceof ApiError && e.code >= 500))) throw e;
      if (!lost) ctx.err(`${(e as Error).message}; watching again once it answers\n`);
      lost = true;
    },
  });
  ctx.onStop(() => void watch.stop());
  await watch.done;
  return EXIT_OK;
}
