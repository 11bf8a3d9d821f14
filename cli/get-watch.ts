/**
 * `meshctl get -w`: prints the current objects, then one row (or document) per change, until SIGINT or
 * SIGTERM, which end it cleanly with exit code 0. It runs the list-then-watch loop of
 * api/client/list-watch.ts: a watch the server closes is reopened from the last resourceVersion seen,
 * and an expired one (410) relists, prints the list and goes on, as kubectl does. Any other error ends it.
 */
import { startListWatch } from '../api/client/list-watch.ts';
import type { KubeObject } from '../api/meta/types.ts';
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

  constructor(
    private readonly ctx: CommandContext,
    private readonly target: Target,
    private readonly table: TableOptions,
  ) {
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
  const opts = listOptions(ctx.args);
  if (target.names[0])
    opts.fieldSelector = [opts.fieldSelector, `metadata.name=${target.names[0]}`].filter(Boolean).join(',');
  const printer = new WatchPrinter(ctx, target, {
    wide: ctx.args.str('output') === 'wide',
    showLabels: ctx.args.bool('show-labels'),
  });
  let listed = false;
  const watch = startListWatch({
    client: ctx.client(),
    plural: target.kind.plural,
    ...opts,
    watchOnly: ctx.args.bool('watch-only'),
    backoff: { baseMs: 1000, maxMs: 1000 },
    async onList(items) {
      if (items.length) await printer.print(items);
      else if (!listed) ctx.err('No resources found\n');
      listed = true;
    },
    onEvent: (event) => printer.print([event.object]),
    onFailure(e) {
      throw e;
    },
  });
  ctx.onStop(() => void watch.stop());
  await watch.done;
  return EXIT_OK;
}
