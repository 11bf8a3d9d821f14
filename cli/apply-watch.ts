/**
 * `meshctl apply -f DIR --watch`: applies once, then watches the files and directories given with -f (chokidar)
 * and applies again after each change, until SIGINT or SIGTERM (exit code 0).
 *
 * - A burst of changes (an editor's write-then-rename save, a `git pull` touching many files) is one apply:
 *   each change restarts a quiet period (`--debounce`, default 300ms), and the apply runs when it ends. Changes during an
 *   apply make one more apply after it, never two at once.
 * - Each apply prints its objects as `apply` does, then one summary line, `apply #N: …` on stdout.
 * - An invalid file is reported and the watch goes on: the other files are applied, the objects of the invalid
 *   one are left as they were (the last good state), and prune does not run until every file loads again
 *   (prune.ts). An unreachable control plane or any other failure of one apply is reported likewise.
 */
import { extname } from 'node:path';
import { realClock, type TimerHandle } from '../api/meta/clock.ts';
import { applyOnce, type ApplyRunOptions } from './apply-run.ts';
import type { CommandContext } from './command.ts';
import { EXIT_OK, UsageError, formatError } from './errors.ts';
import { parseDuration } from '../api/meta/duration.ts';

/** The default quiet period after the last change before applying (`--debounce`). */
export const DEBOUNCE_MS = 300;

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** Runs apply, then again after every debounced change, until stopped. */
export async function watchApply(ctx: CommandContext, opts: ApplyRunOptions): Promise<number> {
  const debounceMs = debounceFlag(ctx);
  // chokidar is ES-only: imported through esm-import.ts, which the shipped build keeps out of the cached bundle.
  const { importEsm } = await import('./esm-import.ts');
  const { watch } = await importEsm<typeof import('chokidar')>('chokidar');
  const runner = new ApplyRunner(ctx, opts, debounceMs);
  const watcher = watch(opts.files, {
    ignoreInitial: true,
    depth: opts.recursive ? undefined : 0,
    ignored: (path, stats) => !!stats?.isFile() && !MANIFEST_EXTENSIONS.has(extname(path).toLowerCase()),
  });
  watcher.on('all', (event, path) => {
    // An editor's swap and backup files change nothing apply reads.
    const file = event === 'add' || event === 'change' || event === 'unlink';
    if (!file || MANIFEST_EXTENSIONS.has(extname(path).toLowerCase())) runner.changed(`${event} ${path}`);
  });
  watcher.on('error', (e) => ctx.err(`error: watching the manifests: ${(e as Error).message}\n`));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  await runner.start();
  await new Promise<void>((resolve) => ctx.onStop(resolve));
  await watcher.close();
  await runner.stop();
  return EXIT_OK;
}

/** Debounces changes into applies, one at a time. */
class ApplyRunner {
  private count = 0;
  private pending: string[] = [];
  private timer?: TimerHandle;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly ctx: CommandContext,
    private readonly opts: ApplyRunOptions,
    private readonly debounceMs: number,
  ) {}

  /** Records a change and restarts the quiet period. */
  changed(what: string): void {
    if (this.stopped) return;
    this.pending.push(what);
    if (this.timer !== undefined) realClock.clearTimeout(this.timer);
    this.timer = realClock.setTimeout(() => this.flush(), this.debounceMs);
  }

  /** The first apply, before any change. */
  start(): Promise<void> {
    return this.launch(['start']);
  }

  /** Applies once now, printing the summary line; never throws. */
  private async run(changes: string[]): Promise<void> {
    const n = ++this.count;
    const why = changes[0] === 'start' ? 'start' : describeChanges(changes);
    try {
      const outcome = await applyOnce(this.ctx, this.opts);
      const problems = outcome.problems ? `, ${outcome.problems} manifest problem(s): kept the last good state` : '';
      const state = outcome.failed ? 'applied with errors' : 'applied';
      this.ctx.out(`apply #${n} (${why}): ${state}, ${outcome.objects} object(s)${problems}\n`);
    } catch (e) {
      this.ctx.err(formatError(e) + '\n');
      this.ctx.out(`apply #${n} (${why}): failed, watching for the next change\n`);
    }
  }

  /** Waits for the apply in progress; no apply starts afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) realClock.clearTimeout(this.timer);
    await this.running;
  }

  private flush(): void {
    this.timer = undefined;
    if (this.running || this.stopped) return; // the apply in progress flushes again when it ends
    const changes = this.pending.splice(0);
    if (changes.length) void this.launch(changes);
  }

  /** Runs one apply; when it ends, changes that came meanwhile (and whose quiet period is over) are applied. */
  private launch(changes: string[]): Promise<void> {
    this.running = this.run(changes).finally(() => {
      this.running = undefined;
      if (this.timer === undefined) this.flush();
    });
    return this.running;
  }
}

/** The `--debounce` flag in ms (a usage error when it is not a duration). */
function debounceFlag(ctx: CommandContext): number {
  const text = ctx.args.str('debounce');
  if (text === undefined) return DEBOUNCE_MS;
  try {
    return parseDuration(text, { allowZero: true });
  } catch (e) {
    throw new UsageError(`--debounce: ${(e as Error).message}`);
  }
}

/** `2 changes: change a.yaml, add b.yaml`. */
function describeChanges(changes: string[]): string {
  const shown = changes.slice(0, 3).join(', ');
  return `${changes.length} change(s): ${shown}${changes.length > 3 ? ', …' : ''}`;
}
