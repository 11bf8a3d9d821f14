import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { createProcessServiceDriver } from './service-process.ts';
import { createProcessSupervisor } from './process-supervisor.ts';
import { createSystemdServiceDriver } from './service-systemd.ts';
import { logPath } from './log-file.ts';
import { unitName } from './systemd-unit.ts';
import { createEngine } from '../engine/reconciler.ts';
import { createDriverRegistry } from './registry.ts';
import { memoryInventoryStore, memoryLogger, tempHost } from '../engine/testing.ts';
import type { ServiceSpec } from '../../api/v1alpha1/generated/host-resource.ts';

type Host = ReturnType<typeof tempHost>;
const rctx = (h: Host) => ({ ...h.ctx, id: 'web', owner: 'x' });
/** A service that leaves a file named `ran` in its working directory. */
const touches = (extra: Partial<ServiceSpec> = {}): ServiceSpec => ({
  command: [process.execPath, '-e', "require('fs').writeFileSync('ran','x');setInterval(()=>{},1e9)"],
  ...extra,
});

/** A host with `outside/` beside its root and `root/<link>` a symlink to it. */
function hostWithLink(link: string): Host & { outside: string } {
  const h = tempHost();
  const outside = join(h.dir, 'outside');
  mkdirSync(outside);
  mkdirSync(join(h.root, link, '..'), { recursive: true });
  symlinkSync(outside, join(h.root, link));
  return { ...h, outside };
}

async function withSupervisor<T>(h: Host, fn: (s: ReturnType<typeof createProcessSupervisor>) => Promise<T>) {
  const supervisor = createProcessSupervisor({ stateDir: h.stateDir, logger: memoryLogger(), stopGraceMs: 2000 });
  try {
    return await fn(supervisor);
  } finally {
    await supervisor.stopAll();
    supervisor.close();
  }
}

test('process Service: a workingDirectory that is a symlink out of the root fails and starts nothing', async () => {
  const h = hostWithLink('srv/app');
  try {
    await withSupervisor(h, async (supervisor) => {
      const driver = createProcessServiceDriver({ supervisor });
      const spec = touches({ workingDirectory: '/srv/app' });
      await assert.rejects(driver.apply(spec, rctx(h), await driver.observe(spec, rctx(h))), /escapes the root/);
      assert.equal((await driver.observe(spec, rctx(h))).exists, false);
      assert.deepEqual(readdirSync(h.outside), []);
    });
  } finally {
    h.cleanup();
  }
});

test('engine: each path through a symlink out of the root Fails with "escapes the root"; nothing lands outside', async () => {
  const h = hostWithLink('srv/app');
  try {
    await withSupervisor(h, async (supervisor) => {
      const store = memoryInventoryStore();
      const engine = createEngine({
        drivers: createDriverRegistry({ supervisor }),
        ctx: h.ctx,
        loadInventory: store.load,
        saveInventory: store.save,
      });
      const r = await engine.reconcile([
        { id: 'm/server', owner: 'm', kind: 'Service', spec: touches({ workingDirectory: '/srv/app' }) },
        { id: 'm/dir', owner: 'm', kind: 'Directory', spec: { path: '/srv/app/data' } },
        { id: 'm/file', owner: 'm', kind: 'File', spec: { path: '/srv/app/config', content: 'x' } },
      ]);
      assert.deepEqual(
        r.results.map((x) => `${x.id} ${x.state}`),
        ['m/server Failed', 'm/dir Failed', 'm/file Failed'],
      );
      for (const x of r.results) assert.match(x.message ?? '', /escapes the root/, x.id);
      assert.deepEqual(readdirSync(h.outside), []);
      assert.equal(await supervisor.inspect('m/server'), undefined);
    });
  } finally {
    h.cleanup();
  }
});

test('process supervisor: the working directory is checked against the root again at each start', async () => {
  const h = hostWithLink('link');
  try {
    await withSupervisor(h, async (supervisor) => {
      const spec = { command: touches().command, env: {}, restart: 'always' as const, fingerprint: 'f' };
      await assert.rejects(
        supervisor.ensure('web', { ...spec, cwd: join(h.root, 'link'), root: h.root }),
        /escapes the root/,
      );
      assert.deepEqual(readdirSync(h.outside), []);
    });
  } finally {
    h.cleanup();
  }
});

test('process supervisor: a service log file that is a symlink is refused and nothing is written through it', async () => {
  const h = tempHost();
  try {
    const target = join(h.dir, 'outside.log');
    writeFileSync(target, 'untouched\n');
    mkdirSync(join(h.stateDir, 'logs'));
    symlinkSync(target, logPath(h.stateDir, 'web'));
    await withSupervisor(h, async (supervisor) => {
      const driver = createProcessServiceDriver({ supervisor });
      const spec = touches();
      await assert.rejects(driver.apply(spec, rctx(h), await driver.observe(spec, rctx(h))), /escapes the state dir/);
      assert.equal(readFileSync(target, 'utf8'), 'untouched\n');
      assert.equal(existsSync(join(h.root, 'ran')), false);
    });
  } finally {
    h.cleanup();
  }
});

/** A systemctl that records its calls, so a test sees that nothing was enabled. */
function systemctlRecorder(dir: string): { bin: string; calls(): string } {
  const bin = join(dir, 'systemctl');
  const log = join(dir, 'systemctl.calls');
  writeFileSync(bin, `#!/bin/sh\necho "$*" >> '${log}'\n[ "$1" = is-active ] && { echo inactive; exit 3; }\nexit 0\n`);
  chmodSync(bin, 0o755);
  return { bin, calls: () => (existsSync(log) ? readFileSync(log, 'utf8') : '') };
}

test('systemd Service: a unit file that is a symlink out of the root fails; nothing is read, written or enabled', async () => {
  const h = tempHost();
  try {
    const outside = join(h.dir, 'outside.service');
    writeFileSync(outside, 'secret\n');
    mkdirSync(join(h.root, 'etc/systemd/system'), { recursive: true });
    symlinkSync(outside, join(h.root, 'etc/systemd/system', unitName('web')));
    const systemctl = systemctlRecorder(h.dir);
    const driver = createSystemdServiceDriver({ systemctl: systemctl.bin });
    const spec = touches({ driver: 'systemd' });
    await assert.rejects(driver.observe(spec, rctx(h)), /escapes the root/);
    await assert.rejects(driver.apply(spec, rctx(h), { exists: false, unit: unitName('web') }), /escapes the root/);
    await assert.rejects(driver.remove(spec, rctx(h)), /escapes the root/);
    assert.equal(readFileSync(outside, 'utf8'), 'secret\n');
    assert.equal(systemctl.calls(), '');
  } finally {
    h.cleanup();
  }
});

test('systemd Service: a workingDirectory that is a symlink out of the root fails; no unit is written', async () => {
  const h = hostWithLink('srv/app');
  try {
    const systemctl = systemctlRecorder(h.dir);
    const driver = createSystemdServiceDriver({ systemctl: systemctl.bin });
    const spec = touches({ driver: 'systemd', workingDirectory: '/srv/app' });
    await assert.rejects(driver.apply(spec, rctx(h), await driver.observe(spec, rctx(h))), /escapes the root/);
    assert.equal(existsSync(join(h.root, 'etc/systemd/system', unitName('web'))), false);
    assert.equal(systemctl.calls(), '');
    rmSync(join(h.root, 'srv/app'));
    mkdirSync(join(h.root, 'srv/app'));
    await driver.apply(spec, rctx(h), await driver.observe(spec, rctx(h)));
    assert.match(systemctl.calls(), /enable --now/);
  } finally {
    h.cleanup();
  }
});
