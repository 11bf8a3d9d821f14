// The control plane is a module like any other (ADR 0002): after `meshctl init`, this node's agent — started
// with nothing but its state directory and root — imports the seeded Declaration and runs the real
// control plane as its supervised service; meshctl reaches it; the agent reports through it with its node
// credential; and killing and restarting the agent leaves the control plane running (it is adopted).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import { loadMeshconfig } from '../../api/client/meshconfig.ts';
import type { KubeObject } from '../../api/meta/types.ts';
import { freePort, killServices, servicePid, spawnAgent, spawnAgentProgram, waitFor } from '../../agent/testing.ts';
import { buildCli, type BuiltCli } from './cli-harness.ts';
import { initWorld } from './init-helpers.ts';
import { spawnAgentCommand } from './join-helpers.ts';
import { INTERVALS, applyObject, assignmentObject, moduleObject, taggedCommand, waitApplied } from './mesh-helpers.ts';

type WithConditions = KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } };
const applied = (a: WithConditions): boolean =>
  a.status?.conditions?.some((c) => c.type === 'Applied' && c.status === 'True') ?? false;
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('meshctl init, then the agent', () => {
  let cli: BuiltCli;
  before(async () => {
    cli = await buildCli();
  });
  after(() => cli.cleanup());

  it('brings up the control plane as its supervised service from the seeded store, and keeps it across an agent restart', async (t) => {
    const w = initWorld(t, cli);
    const port = await freePort();
    const init = await w.init(['--listen', `127.0.0.1:${port}`]);
    assert.equal(init.code, 0, init.stderr);
    // The agent command as init printed it (the built bundle, --state-dir, --root), with short intervals.
    const printed = /^ {7}(\S.* run --state-dir .*)$/m.exec(init.stdout)?.[1];
    assert.equal(
      printed,
      `${process.execPath} ${join(dirname(cli.bin), 'mesh-agent.js')} run --state-dir ${w.stateDir} --root ${w.root}`,
    );
    const agent = await spawnAgentProgram([
      ...printed.split(' '),
      '--reconcile-interval',
      '300ms',
      '--heartbeat-interval',
      '300ms',
    ]);
    w.agents.push(agent);
    assert.ok(
      agent.lines().some((l) => l.msg === 'Imported bootstrap Declaration' && l.node === 'cp-1'),
      agent.output(),
    );
    assert.ok(existsSync(join(w.stateDir, 'bootstrap-declaration.json.imported')));

    const cpPid = await waitFor(
      () => servicePid(w.stateDir, 'control-plane/server'),
      10_000,
      'the control-plane service',
    );
    const get = await waitFor(
      async () => {
        const r = await cli.run(['get', 'assignments'], { config: w.meshconfig });
        return r.code === 0 && /control-plane\s+control-plane\s+cp-1/.test(r.stdout) && r;
      },
      20_000,
      'meshctl to reach the control plane',
    );
    assert.match(get.stdout, /overlay-hub\s+overlay-hub\s+cp-1/);
    assert.equal(
      readFileSync(join(w.root, 'var/lib/meshctl/overlay-hub/ROLE'), 'utf8').split('\n')[0],
      'This node is the mesh\'s overlay hub: declared by the Assignment of module "overlay-hub", never elected.',
    );

    const admin = createClient(loadMeshconfig(w.meshconfig));
    t.after(() => admin.close());
    // The agent reports with its node credential (from the seed): both assignments become Applied.
    await waitFor(
      async () => (await admin.list('assignments')).items.every((a) => applied(a as WithConditions)),
      20_000,
      'both assignments Applied',
    );

    assert.notEqual(await agent.kill('SIGKILL'), undefined);
    assert.ok(alive(cpPid), 'the control plane outlives its agent');
    assert.equal(
      (await cli.run(['get', 'nodes', 'cp-1', '-o', 'name'], { config: w.meshconfig })).stdout,
      'node/cp-1\n',
    );

    const again = await spawnAgent(['--state-dir', w.stateDir]);
    w.agents.push(again);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(
      servicePid(w.stateDir, 'control-plane/server'),
      cpPid,
      'the restarted agent adopted the running control plane',
    );
    assert.ok(
      again.lines().some((l) => l.msg === 'Adopted service process' && l.pid === cpPid),
      again.output(),
    );
    assert.ok(!again.lines().some((l) => l.msg === 'Imported bootstrap Declaration'), 'the seed is imported once');
    assert.equal((await cli.run(['get', 'nodes', 'cp-1', '-o', 'name'], { config: w.meshconfig })).code, 0);
  });

  it('init → token → join: two machines join the mesh the initialised node runs, over TLS, and an assignment converges on each', async (t) => {
    const w = initWorld(t, cli);
    const port = await freePort();
    assert.equal((await w.init(['--listen', `127.0.0.1:${port}`])).code, 0);
    w.agents.push(await spawnAgent(['--state-dir', w.stateDir, '--root', w.root, ...INTERVALS]));
    await waitFor(
      async () => (await cli.run(['get', 'nodes'], { config: w.meshconfig })).code === 0,
      20_000,
      'the control plane, run by the agent',
    );

    // The joining machines' directories live apart from the init world's, so that its cleanup (agents killed,
    // then its directory removed) runs first and this one can still find their services' pid records.
    const machines = mkdtempSync(join(tmpdir(), 'meshctl-join-'));
    t.after(() => {
      for (const name of ['edge-1', 'edge-2']) killServices(join(machines, name, 'state'));
      rmSync(machines, { recursive: true, force: true });
    });
    const joined = [];
    for (const name of ['edge-1', 'edge-2']) {
      const created = await cli.run(['token', 'create', '--description', name], { config: w.meshconfig });
      assert.equal(created.code, 0, created.stderr);
      const command = /mesh-agent join (.*)$/m.exec(created.stdout)?.[1]?.split(' ');
      assert.ok(command, created.stdout);
      const dirs = { stateDir: join(machines, name, 'state'), root: join(machines, name, 'root') };
      mkdirSync(dirs.root, { recursive: true });
      const agent = await spawnAgentCommand([
        'join',
        ...command,
        '--name',
        name,
        '--state-dir',
        dirs.stateDir,
        '--root',
        dirs.root,
        ...INTERVALS,
      ]);
      w.agents.push(agent);
      joined.push({ name, ...dirs });
    }
    const admin = createClient(loadMeshconfig(w.meshconfig));
    t.after(() => admin.close());
    await applyObject(
      admin,
      'modules',
      moduleObject('hello', '1.0.0', [
        { id: 'dir', kind: 'Directory', spec: { path: '/srv/hello' } },
        { id: 'conf', kind: 'File', spec: { path: '/srv/hello/hello.conf', content: 'hello\n' } },
        {
          id: 'svc',
          kind: 'Service',
          spec: { driver: 'process', command: taggedCommand('init-join'), workingDirectory: '/srv/hello' },
        },
      ]),
    );
    for (const n of joined)
      await applyObject(admin, 'assignments', assignmentObject(`hello-on-${n.name}`, 'hello', n.name));
    for (const n of joined) {
      await waitApplied(admin, `hello-on-${n.name}`, '1.0.0').catch(async (e: Error) => {
        const a = await admin.get('assignments', `hello-on-${n.name}`);
        const d = await admin.get('declarations', n.name).catch(() => undefined);
        throw new Error(
          `${e.message}\n${JSON.stringify(a.status)}\n${JSON.stringify(d?.status)}\n${w.agents.map((x) => x.output().slice(-2500)).join('\n---\n')}`,
        );
      });
      assert.equal(readFileSync(join(n.root, 'srv/hello/hello.conf'), 'utf8'), 'hello\n');
      assert.ok(servicePid(n.stateDir, `hello-on-${n.name}/svc`), `the service runs on ${n.name}`);
    }
    const tokens = await cli.run(['token', 'list'], { config: w.meshconfig });
    assert.match(
      tokens.stdout,
      /yes \(edge-1\)[\s\S]*yes \(edge-2\)|yes \(edge-2\)[\s\S]*yes \(edge-1\)/,
      tokens.stdout,
    );
  });
});
