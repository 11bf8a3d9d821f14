import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSystemdServiceDriver } from './service-systemd.ts';
import { quoteExecArg, renderUnit, unitName } from './systemd-unit.ts';
import { tempHost } from '../engine/testing.ts';
import type { ServiceSpec } from '../../api/v1alpha1/generated/host-resource.ts';

/** A stand-in for the systemctl binary only: records its arguments, keeps is-active state in files. */
function systemctlDouble(dir: string): { bin: string; calls(): string[] } {
  const bin = join(dir, 'systemctl');
  const log = join(dir, 'systemctl.calls');
  writeFileSync(
    bin,
    `#!/bin/sh
echo "$*" >> '${log}'
state='${dir}/active-'
case "$1" in
  daemon-reload) exit 0 ;;
  enable) [ "$2" = "--now" ] && echo active > "$state$3"; exit 0 ;;
  restart|start) echo active > "$state$2"; exit 0 ;;
  disable) [ "$2" = "--now" ] && rm -f "$state$3"; exit 0 ;;
  stop) rm -f "$state$2"; exit 0 ;;
  is-active) if [ -f "$state$2" ]; then cat "$state$2"; exit 0; else echo inactive; exit 3; fi ;;
  *) echo "unknown command $1" >&2; exit 1 ;;
esac
`,
  );
  chmodSync(bin, 0o755);
  return { bin, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
}

const spec: ServiceSpec = {
  driver: 'systemd',
  command: ['/usr/bin/app', '--greeting', 'hello world', 'say "hi"', '100%', '$HOME', 'back\\slash', ''],
  env: { MODE: 'prod', MOTD: 'it\'s "fine" 100%' },
  workingDirectory: '/srv/app',
};

test('systemd: the rendered unit quotes ExecStart and Environment by systemd rules', () => {
  assert.equal(unitName('web/app-1'), 'meshctl-web-app\\x2d1.service');
  assert.equal(quoteExecArg('plain'), 'plain');
  assert.equal(
    renderUnit(spec, 'meshctl-web.service'),
    `# Managed by meshctl (meshctl-web.service); local changes are overwritten.
[Unit]
Description=meshctl service meshctl-web.service

[Service]
Type=simple
ExecStart=/usr/bin/app --greeting "hello world" "say \\"hi\\"" 100%% $$HOME "back\\\\slash" ""
Environment="MODE=prod" "MOTD=it's \\"fine\\" 100%%"
WorkingDirectory=/srv/app
Restart=always
RestartSec=1s

[Install]
WantedBy=multi-user.target
`,
  );
  assert.throws(() => renderUnit({ ...spec, command: ['-/bin/x'] }, 'u'), /prefix/);
});

test('systemd: writes the unit under the root and drives systemctl through create, no-op, change, drift and removal', async () => {
  const h = tempHost();
  try {
    const sc = systemctlDouble(h.dir);
    const driver = createSystemdServiceDriver({ systemctl: sc.bin });
    const ctx = { ...h.ctx, id: 'web', owner: 'x' };
    const unitFile = join(h.root, 'etc/systemd/system/meshctl-web.service');
    const converge = async (s: ServiceSpec) => {
      const o = await driver.observe(s, ctx);
      if (driver.diff(s, o).length) await driver.apply(s, ctx, o);
      return driver.diff(s, await driver.observe(s, ctx));
    };

    assert.deepEqual(await converge(spec), []);
    assert.equal(readFileSync(unitFile, 'utf8'), renderUnit(spec, 'meshctl-web.service'));
    assert.deepEqual(sc.calls(), [
      'daemon-reload',
      'enable --now meshctl-web.service',
      'is-active meshctl-web.service',
    ]);

    const before = sc.calls().length;
    const inSync = await driver.observe(spec, ctx);
    assert.deepEqual(driver.diff(spec, inSync), []);
    assert.equal(driver.owns?.(spec, inSync), true, 'the marker line says meshctl wrote it');
    assert.deepEqual(sc.calls().slice(before), ['is-active meshctl-web.service'], 'in sync: only is-active');

    const changed = { ...spec, command: ['/usr/bin/app', '--v2'] };
    const c0 = sc.calls().length;
    assert.deepEqual(await converge(changed), []);
    assert.deepEqual(sc.calls().slice(c0), [
      'is-active meshctl-web.service',
      'daemon-reload',
      'restart meshctl-web.service',
      'is-active meshctl-web.service',
    ]);
    assert.match(readFileSync(unitFile, 'utf8'), /^ExecStart=\/usr\/bin\/app --v2$/m);

    writeFileSync(join(h.dir, 'active-meshctl-web.service'), 'failed\n');
    const d0 = sc.calls().length;
    assert.deepEqual(await converge(changed), []);
    assert.deepEqual(sc.calls().slice(d0), [
      'is-active meshctl-web.service',
      'enable --now meshctl-web.service',
      'is-active meshctl-web.service',
    ]);

    const r0 = sc.calls().length;
    await driver.remove(changed, ctx);
    assert.equal(existsSync(unitFile), false);
    assert.deepEqual(sc.calls().slice(r0), ['disable --now meshctl-web.service', 'daemon-reload']);
    await driver.remove(changed, ctx);
    assert.equal(sc.calls().length, r0 + 2, 'removing an absent unit runs nothing');
  } finally {
    h.cleanup();
  }
});
