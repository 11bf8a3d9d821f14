// The control plane is a module like any other (ADR 0002): after `meshctl init`, this node's agent — started
// with nothing but its state directory and root — imports the seeded Declaration and runs the real
// control plane as its supervised service; meshctl reaches it; the agent reports through it with its node
// credential; and killing and restarting the agent leaves the control plane running (it is adopted).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import { loadMeshconfig } from '../../api/client/meshconfig.ts';
import type { KubeObject } from '../../api/meta/types.ts';
import { freePort, servicePid, spawnAgent, waitFor } from '../../agent/testing.ts';
import { buildCli, type BuiltCli } from './cli-harness.ts';
import { initWorld } from './init-helpers.ts';

type WithConditions = KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } };
const applied = (a: WithConditions): boolean => a.status?.conditions?.some((c) => c.type === 'Applied' && c.status === 'True') ?? false;
const alive = (pid: number): boolean => { try { process.kill(pid, 0); return true; } catch { return false; } };

describe('meshctl init, then the agent', () => {
  let cli: BuiltCli;
  before(async () => { cli = await buildCli(); });
  after(() => cli.cleanup());

  it('brings up the control plane as its supervised service from the seeded store, and keeps it across an agent restart', async (t) => {
    const w = initWorld(t, cli);
    const port = await freePort();
    assert.equal((await w.init(['--listen', `127.0.0.1:${port}`])).code, 0);
    const agentArgs = ['--state-dir', w.stateDir, '--root', w.root, '--reconcile-interval', '300ms', '--heartbeat-interval', '300ms'];
    const agent = await spawnAgent(agentArgs);
    w.agents.push(agent);
    assert.ok(agent.lines().some((l) => l.msg === 'Imported bootstrap Declaration' && l.node === 'cp-1'), agent.output());
    assert.ok(existsSync(join(w.stateDir, 'bootstrap-declaration.json.imported')));

    const cpPid = await waitFor(() => servicePid(w.stateDir, 'control-plane/server'), 10_000, 'the control-plane service');
    const get = await waitFor(async () => {
      const r = await cli.run(['get', 'assignments'], { config: w.meshconfig });
      return r.code === 0 && /control-plane\s+control-plane\s+cp-1/.test(r.stdout) && r;
    }, 20_000, 'meshctl to reach the control plane');
    assert.match(get.stdout, /overlay-hub\s+overlay-hub\s+cp-1/);
    assert.equal(readFileSync(join(w.root, 'var/lib/meshctl/overlay-hub/ROLE'), 'utf8').split('\n')[0],
      'This node is the mesh\'s overlay hub: declared by the Assignment of module "overlay-hub", never elected.');

    const admin = createClient(loadMeshconfig(w.meshconfig));
    t.after(() => admin.close());
    // The agent reports with its node credential (from the seed): both assignments become Applied.
    await waitFor(async () => (await admin.list('assignments')).items.every((a) => applied(a as WithConditions)), 20_000, 'both assignments Applied');

    assert.notEqual(await agent.kill('SIGKILL'), undefined);
    assert.ok(alive(cpPid), 'the control plane outlives its agent');
    assert.equal((await cli.run(['get', 'nodes', 'cp-1', '-o', 'name'], { config: w.meshconfig })).stdout, 'node/cp-1\n');

    const again = await spawnAgent(['--state-dir', w.stateDir]);
    w.agents.push(again);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(servicePid(w.stateDir, 'control-plane/server'), cpPid, 'the restarted agent adopted the running control plane');
    assert.ok(again.lines().some((l) => l.msg === 'Adopted service process' && l.pid === cpPid), again.output());
    assert.ok(!again.lines().some((l) => l.msg === 'Imported bootstrap Declaration'), 'the seed is imported once');
    assert.equal((await cli.run(['get', 'nodes', 'cp-1', '-o', 'name'], { config: w.meshconfig })).code, 0);
  });
});
