import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createJsonLogger } from './logger.ts';

test('the JSON logger writes one object a line, an Error as its message wherever it is', () => {
  const lines: string[] = [];
  const logger = createJsonLogger({ write: (l) => lines.push(l), fields: { component: 'store' } });
  logger.info('Updated Declaration', { node: 'a', generation: 3 });
  logger.error('Reconcile failed', { key: 'a', error: new Error('boom') });
  logger.error('Compaction failed', { detail: { cause: new Error('disk full'), tries: [1, 2] } });
  assert.ok(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n')));
  const [a, b, c] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    { ...a, time: undefined },
    { time: undefined, level: 'info', msg: 'Updated Declaration', component: 'store', node: 'a', generation: 3 },
  );
  assert.ok(!Number.isNaN(Date.parse(String(a.time))));
  assert.equal(b.error, 'boom');
  assert.equal(b.level, 'error');
  assert.deepEqual(c.detail, { cause: 'disk full', tries: [1, 2] });
});

test('stderr gets the lines of a turn in one write, an error line at once, and what is pending at exit', () => {
  const script = `
    import { createJsonLogger } from ${JSON.stringify(new URL('./logger.ts', import.meta.url).href)};
    const writes = [];
    const real = process.stderr.write.bind(process.stderr);
    process.stderr.write = (chunk, ...rest) => (writes.push(String(chunk)), real(chunk, ...rest));
    const log = createJsonLogger();
    for (let i = 0; i < 3; i++) log.info('Updated Declaration', { i });
    log.error('Reconcile failed', { i: 3 });
    log.info('Updated Declaration', { i: 4 });
    setImmediate(() => {
      log.info('Updated Declaration', { i: 5 });
      log.info('Updated Declaration', { i: 6 });
      process.on('exit', () => real('WRITES ' + JSON.stringify(writes.map((w) => w.split('\\n').length - 1)) + '\\n'));
      process.exit(0);
    });
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => l.startsWith('{'));
  assert.deepEqual(
    lines.map((l) => (JSON.parse(l) as { i: number }).i),
    [0, 1, 2, 3, 4, 5, 6],
    'every line, in order, the last two written at exit',
  );
  // Lines per write: the first three with the error, the fourth at the end of its turn, the last two at exit.
  assert.match(r.stderr, /^WRITES \[4,1,2\]$/m);
});
