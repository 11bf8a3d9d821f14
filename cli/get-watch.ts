/**
 * `meshctl get -w`: prints the current objects, then one row (or document) per change, until SIGINT or
 * SIGTERM, which end it cleanly with exit code 0. A watch the server closes is reopened from the last
 * resourceVersion seen.
 */
import type { KubeObject, WatchEvent } from '../api/meta/types.ts';
import type { WatchStream } from '../api/client/types.ts';
import { ApiError } from '../api/meta/api-error.ts';
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

  constructor(private readonly ctx: CommandContext, private readonly target: Target, private readonly table: TableOptions) {
    this.headerDone = ctx.args.bool('no-headers');
  }

  async print(objects: KubeObject[]): Promise<void> {
    const output = this.ctx.args.str('output');
    if (output === 'yaml' || output === 'json' || output === 'name') {
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
  const client = ctx.client();
  const { plural } = target.kind;
  const opts = listOptions(ctx.args);
  if (target.names[0]) opts.fieldSelector = [opts.fieldSelector, `metadata.name=${target.names[0]}`].filter(Boolean).join(',');
  const printer = new WatchPrinter(ctx, target, { wide: ctx.args.str('output') === 'wide', showLabels: ctx.args.bool('show-labels') });
  let stream: WatchStream | undefined;
  let stopped = false;
  ctx.onStop(() => {
    stopped = true;
    stream?.close();
  });
  let rv: string | undefined;
  if (!ctx.args.bool('watch-only')) {
    const list = await client.list(plural, opts);
    if (list.items.length) await printer.print(list.items);
    else ctx.err('No resources found\n');
    rv = list.metadata.resourceVersion;
  }
  while (!stopped) {
    stream = await client.watch(plural, { ...opts, ...(rv ? { resourceVersion: rv } : {}) });
    if (stopped) stream.close();
    const started = Date.now();
    for await (const event of stream.events) rv = await onEvent(event, printer, rv);
    if (!stopped && Date.now() - started < 1000) await new Promise((r) => setTimeout(r, 1000));
  }
  return EXIT_OK;
}

/** Prints one event; returns the resourceVersion to resume from. An ERROR event ends the command. */
async function onEvent(event: WatchEvent, printer: WatchPrinter, rv: string | undefined): Promise<string | undefined> {
  if (event.type === 'ERROR') {
    const status = event.object as unknown as Parameters<typeof ApiError.fromStatus>[0];
    throw ApiError.fromStatus(status, status.code ?? 500);
  }
  const next = event.object?.metadata?.resourceVersion ?? rv;
  if (event.type !== 'BOOKMARK') await printer.print([event.object]);
  return next;
}
