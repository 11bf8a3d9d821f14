// manifests/systemd/: the agent's unit, the only unit a node needs (the control plane is a service of the
// agent). Checked for what the README promises, and with `systemd-analyze verify` where it is installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './harness.ts';

const DIR = join(REPO_ROOT, 'manifests', 'systemd');
const unit = readFileSync(join(DIR, 'mesh-agent.service'), 'utf8');

/** The `Key=value` lines of one section. */
function section(text: string, name: string): Record<string, string> {
  const body = text.split(/^\[/m).find((s) => s.startsWith(`${name}]`)) ?? '';
  const out: Record<string, string> = {};
  for (const line of body.split('\n').slice(1)) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2]!;
  }
  return out;
}

test('mesh-agent.service runs the agent from its state directory, restarts it, and leaves its services running', () => {
  assert.deepEqual(
    readdirSync(DIR).filter((f) => f.endsWith('.service')),
    ['mesh-agent.service'],
    'no unit for the control plane',
  );
  const s = section(unit, 'Service');
  assert.equal(s.ExecStart, '/usr/bin/mesh-agent run --state-dir /var/lib/meshctl/agent');
  assert.equal(s.Restart, 'always');
  assert.equal(s.KillMode, 'process', 'a stop or restart signals only the agent; the control plane keeps running');
  assert.equal(section(unit, 'Install').WantedBy, 'multi-user.target');
  for (const k of ['NoNewPrivileges', 'ProtectSystem', 'PrivateTmp', 'ProtectHome'])
    assert.equal(s[k], undefined, `${k} would constrain every supervised service`);
});

test('mesh-agent.service passes systemd-analyze verify', (t) => {
  if (spawnSync('systemd-analyze', ['--version']).status !== 0) {
    t.skip('systemd-analyze is not installed');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // verify insists that the binary exists: point ExecStart at one that does, keep everything else.
  writeFileSync(
    join(dir, 'mesh-agent.service'),
    unit.replace('/usr/bin/mesh-agent', `${process.execPath} ${join(REPO_ROOT, 'agent', 'main.ts')}`),
  );
  const r = spawnSync('systemd-analyze', ['verify', join(dir, 'mesh-agent.service')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr.trim(), '');
});
