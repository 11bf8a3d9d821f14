// Where `meshctl init` puts the agent's root, and how it finds the programs it prints and declares: the
// command beside an installed meshctl, the bundle beside a checkout's, else PATH.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { defaultAgentRoot, planInit, programCommand } from './init-plan.ts';

test('the agent root is / as root and ./.meshctl/root for any other user; --agent-root wins', () => {
  assert.equal(defaultAgentRoot(0), '/');
  assert.equal(defaultAgentRoot(1000), resolve('.meshctl/root'));
  assert.equal(planInit({ sans: [], name: 'n', agentRoot: 'r' }).agentRoot, resolve('r'));
});

test('programCommand: the command beside an installed meshctl, the bundle beside a checkout, else PATH', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-program-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const dist = join(dir, 'lib', 'node_modules', 'meshctl', 'dist');
  mkdirSync(dist, { recursive: true });
  for (const name of ['meshctl', 'mesh-control-plane']) writeFileSync(join(dist, `${name}.js`), '');
  mkdirSync(join(dir, 'bin'));
  for (const name of ['meshctl', 'mesh-control-plane']) symlinkSync(join(dist, `${name}.js`), join(dir, 'bin', name));

  // Installed (`npm install -g .`): the bin link beside the one that was run, not the folder it points into.
  assert.deepEqual(programCommand('mesh-control-plane', join(dir, 'bin', 'meshctl')), [
    join(dir, 'bin', 'mesh-control-plane'),
  ]);
  // A checkout run as `node dist/meshctl.js`: node with the bundle beside it.
  assert.deepEqual(programCommand('mesh-control-plane', join(dist, 'meshctl.js')), [
    process.execPath,
    join(dist, 'mesh-control-plane.js'),
  ]);
  // Neither: the name, found on PATH by whoever runs it.
  assert.deepEqual(programCommand('mesh-agent', join(dir, 'bin', 'meshctl')), ['mesh-agent']);
  assert.deepEqual(programCommand('mesh-agent', undefined), ['mesh-agent']);
});
