import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createProcessSupervisor, type ProcessSupervisorOptions } from './process-supervisor.ts';
import { logPath } from './log-file.ts';
import { recordPath, procArgv } from './process-record.ts';
import { tempHost, memoryLogger } from '../engine/testing.ts';
import type { ProcessSpec } from './process-types.ts';
import { FakeClock } from '../../api/meta/fake-clock.ts';

const node = process.execPath;
const forever = 'setInterval(()=>{},1e9)';
/** A poll interval a FakeClock never reaches. */
const NEVER = 1e12;
const spec = (script: string, fingerprint = script, extra: Partial<ProcessSpec> = {}, cwd = '/'): ProcessSpec => ({
  command: [node, '-e', script],
  env: {},
  cwd,
  restart: 'always',
  fingerprint,
  ...extra,
});

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return (procArgv(pid) ?? []).length > 0;
  } catch {
    return false;
  }
}

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 5000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A host with a supervisor; cleanup stops everything and SIGKILLs any pid the test saw. */
function setup(opts: Partial<ProcessSupervisorOptions> = {}) {
  const h = tempHost();
  const pids = new Set<number>();
  const logger = memoryLogger();
  const make = (more: Partial<ProcessSupervisorOptions> = {}) =>
    createProcessSupervisor({
      stateDir: h.stateDir,
      logger,
      backoff: { initialMs: 50, maxMs: 400, resetAfterMs: 500 },
      stopGraceMs: 300,
      pollMs: 50,
      ...opts,
      ...more,
    });
  const sup = make();
  const cleanup = async (...sups: Array<ReturnType<typeof make>>) => {
    for (const s of [sup, ...sups]) {
      await s.stopAll().catch(() => {});
      s.close();
    }
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    h.cleanup();
  };
  return { h, sup, make, pids, logger, cleanup };
}

test('process: starts, captures stdout and stderr in the log file, keeps a pid file', async () => {
  const t = setup();
  try {
    const st = await t.sup.ensure('web', spec(`console.log('hello out'); console.error('hello err'); ${forever}`));
    t.pids.add(st.pid!);
    assert.equal(st.phase, 'running');
    assert.ok(alive(st.pid));
    await until('log lines', () =>
      /hello out[\s\S]*hello err|hello err[\s\S]*hello out/.test(readFileSync(logPath(t.h.stateDir, 'web'), 'utf8')),
    );
    const rec = JSON.parse(readFileSync(recordPath(t.h.stateDir, 'web'), 'utf8'));
    assert.equal(rec.pid, st.pid);
    assert.deepEqual(rec.command, st.pid && procArgv(st.pid));
    const again = await t.sup.ensure('web', spec(`console.log('hello out'); console.error('hello err'); ${forever}`));
    assert.equal(again.pid, st.pid, 'same spec: not restarted');
  } finally {
    await t.cleanup();
  }
});

test('process: restarts after being killed, with exponential backoff that resets after a long run', async () => {
  const clock = new FakeClock();
  const delays: number[] = [];
  const setTimer = clock.setTimeout.bind(clock);
  clock.setTimeout = (fn, ms) => {
    if (ms !== NEVER) delays.push(ms);
    return setTimer(fn, ms);
  };
  const t = setup({ backoff: { initialMs: 40, maxMs: 160, resetAfterMs: 400 }, pollMs: NEVER, clock });
  /** Waits until `id` waits out its restart delay (its timer is set beside the poller's), then lets it pass. */
  const restartDue = async (id: string): Promise<void> => {
    await until(`${id} backing off`, async () => (await t.sup.inspect(id))?.phase === 'backoff' && clock.pending() > 1);
    clock.advance(delays.at(-1)!);
  };
  try {
    const first = await t.sup.ensure('svc', spec(forever));
    t.pids.add(first.pid!);
    process.kill(first.pid!, 'SIGKILL');
    await restartDue('svc');
    const second = await until('restart', async () => {
      const s = await t.sup.inspect('svc');
      return s?.phase === 'running' && s.pid !== first.pid && s;
    });
    t.pids.add(second.pid!);
    assert.equal(second.restarts, 1);
    assert.equal(second.lastExit?.signal, 'SIGKILL');
    await t.sup.ensure('loop', spec('process.exit(3)'));
    for (let i = 0; i < 5; i++) await restartDue('loop');
    await until('five crash-loop restarts', async () => ((await t.sup.inspect('loop'))?.restarts ?? 0) >= 5);
    await t.sup.stop('loop');
    assert.deepEqual(delays.slice(1, 6), [40, 80, 160, 160, 160], 'doubling from 40 ms, capped at 160 ms');
    clock.advance(450);
    process.kill(second.pid!, 'SIGKILL');
    await restartDue('svc');
    await until('restart after a long run', async () => {
      const s = await t.sup.inspect('svc');
      return s?.phase === 'running' && s.pid !== second.pid && s;
    });
    assert.equal(delays.at(-1), 40, 'the delay reset after the process stayed up longer than resetAfterMs');
  } finally {
    await t.cleanup();
  }
});

test('process: stop sends SIGTERM, then SIGKILL after the grace period, and forgets the service', async () => {
  const t = setup();
  try {
    const st = await t.sup.ensure(
      'stubborn',
      spec(`process.on('SIGTERM', () => console.log('ignoring TERM')); ${forever}`),
    );
    t.pids.add(st.pid!);
    await until('handler installed', () =>
      readFileSync(logPath(t.h.stateDir, 'stubborn'), 'utf8').includes('starting'),
    );
    await new Promise((r) => setTimeout(r, 150));
    const t0 = Date.now();
    await t.sup.stop('stubborn');
    assert.ok(Date.now() - t0 >= 250, 'waited for the grace period before SIGKILL');
    assert.equal(alive(st.pid), false);
    assert.match(readFileSync(logPath(t.h.stateDir, 'stubborn'), 'utf8'), /ignoring TERM/);
    assert.equal(existsSync(recordPath(t.h.stateDir, 'stubborn')), false);
    assert.equal(await t.sup.inspect('stubborn'), undefined);
  } finally {
    await t.cleanup();
  }
});

test('process: a spec change restarts it with the new command', async () => {
  const t = setup();
  try {
    const v1 = await t.sup.ensure('app', spec(`console.log('v1'); ${forever}`));
    t.pids.add(v1.pid!);
    const v2 = await t.sup.ensure('app', spec(`console.log('v2'); ${forever}`));
    t.pids.add(v2.pid!);
    assert.notEqual(v2.pid, v1.pid);
    assert.equal(alive(v1.pid), false);
    assert.match(procArgv(v2.pid!)!.join(' '), /v2/);
    await assert.rejects(
      t.sup.ensure('bad', spec(forever, 'x', {}, '/does/not/exist')),
      /working directory .* does not exist/,
    );
    await assert.rejects(t.sup.ensure('bad', { ...spec(forever), command: ['/no/such/binary'] }), /could not start/);
  } finally {
    await t.cleanup();
  }
});

test('process: a new supervisor on the same state dir adopts the running process instead of starting a duplicate', async () => {
  const t = setup();
  const b = t.make();
  try {
    const st = await t.sup.ensure('kept', spec(forever));
    t.pids.add(st.pid!);
    t.sup.close();
    const adopted = await b.inspect('kept');
    assert.equal(adopted?.pid, st.pid);
    assert.equal(adopted?.adopted, true);
    assert.equal((await b.ensure('kept', spec(forever))).pid, st.pid, 'same spec: no duplicate');
    process.kill(st.pid!, 'SIGKILL');
    const restarted = await until('restart of the adopted process', async () => {
      const s = await b.inspect('kept');
      return s?.phase === 'running' && s.pid !== st.pid && s;
    });
    t.pids.add(restarted.pid!);
    assert.equal(restarted.adopted, false);
  } finally {
    await t.cleanup(b);
  }
});

test('process: logs are rotated at the size cap', async () => {
  const t = setup({ logMaxBytes: 2000 });
  try {
    const st = await t.sup.ensure('chatty', spec(`setInterval(() => console.log('x'.repeat(200)), 5)`));
    t.pids.add(st.pid!);
    const p = logPath(t.h.stateDir, 'chatty');
    await until('a rotated log', () => existsSync(`${p}.1`));
    assert.ok(statSync(`${p}.1`).size > 2000);
  } finally {
    await t.cleanup();
  }
});

test('process: stopping a service stops what it started too (its own process group)', async () => {
  const t = setup();
  try {
    const st = await t.sup.ensure('tree', {
      command: ['sh', '-c', `${node} -e "${forever}" & wait`],
      env: {},
      cwd: '/',
      restart: 'always',
      fingerprint: 'tree',
    });
    t.pids.add(st.pid!);
    const child = await until("the service's child", () => {
      const out = readFileSync(`/proc/${st.pid}/task/${st.pid}/children`, 'utf8').trim();
      return out ? Number(out.split(' ')[0]) : undefined;
    });
    t.pids.add(child);
    assert.equal(
      readFileSync(`/proc/${child}/stat`, 'utf8').split(') ')[1].split(' ')[2],
      String(st.pid),
      "the child is in the service's group",
    );
    await t.sup.stop('tree');
    assert.equal(alive(st.pid), false);
    assert.equal(alive(child), false, 'the child was stopped with its service, not left to init');
  } finally {
    await t.cleanup();
  }
});

test('process: a new supervisor adopts a service whose argv no longer matches its command (exec, setproctitle)', async () => {
  const t = setup();
  try {
    // `sh -c 'exec node …'` replaces the shell: /proc/<pid>/cmdline is node's, not the declared command.
    const declared = {
      command: ['sh', '-c', `exec ${node} -e "${forever}"`],
      env: {},
      cwd: '/',
      restart: 'always' as const,
      fingerprint: 'exec',
    };
    const st = await t.sup.ensure('exec', declared);
    t.pids.add(st.pid!);
    await until('the exec', () => (procArgv(st.pid!) ?? [])[0] === node);
    t.sup.close();
    const next = t.make();
    const again = await next.ensure('exec', declared);
    assert.equal(again.pid, st.pid, 'adopted, not started a second time');
    assert.equal(again.adopted, true);
    await t.cleanup(next);
  } finally {
    await t.cleanup();
  }
});
