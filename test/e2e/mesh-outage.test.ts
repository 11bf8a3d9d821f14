// Issue 3, "Done when" 3, 4 and 5 across two nodes, with the real `mesh-control-plane` and two real
// `mesh-agent` processes, asserting on files and processes on disk (agent/agent-process.test.ts does the
// single-node sequence; this one checks that every node holds, that meshctl says the API is unreachable,
// and that each agent reconnects on its own). ADR 0053: the control plane being down is every node in the
// ordinary disconnected situation at the same time; what is lost is change, not operation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../../api/meta/types.ts';
import { freePort, metricValue, servicePid, waitFor, type AgentProcess } from '../../agent/testing.ts';
import {
  applyObject,
  assignmentObject,
  createMesh,
  isRunning,
  logLines,
  meshctl,
  moduleObject,
  pidsWithTag,
  RUN_TAG,
  taggedCommand,
  waitApplied,
} from './mesh-helpers.ts';

const NODES = ['a', 'b'] as const;
type NodeName = (typeof NODES)[number];

/** The module at version `v`: its file's content and its service's command change with the version. */
const web = (v: number): KubeObject =>
  moduleObject('web', `${v}.0.0`, [
    { id: 'dir', kind: 'Directory', spec: { path: '/srv/web' } },
    { id: 'conf', kind: 'File', spec: { path: '/srv/web/conf', content: `version=${v}\n` } },
    {
      id: 'server',
      kind: 'Service',
      spec: { driver: 'process', command: taggedCommand(`web-v${v}`), workingDirectory: '/srv/web' },
    },
  ]);
const SERVER = (n: NodeName): string => `web-on-${n}/server`;
const UNREACHABLE = 'meshagent_control_plane_unreachable_seconds';

async function unreachableSeconds(agent: AgentProcess): Promise<number | undefined> {
  return metricValue(await (await fetch(`${agent.metrics}/metrics`)).text(), UNREACHABLE);
}

test('control plane down: both nodes keep running and correct drift, an agent cold-starts from its store, and all reconnect when it returns', async (t) => {
  const mesh = createMesh(t);
  const listen = `127.0.0.1:${await freePort()}`;
  const cp = await mesh.controlPlane({ listen });
  const admin = mesh.admin(cp);
  const agents: Record<NodeName, AgentProcess> = Object.fromEntries(
    await Promise.all(NODES.map(async (n) => [n, await mesh.agent(n, cp)] as const)),
  ) as Record<NodeName, AgentProcess>;
  const conf = (n: NodeName): string => join(mesh.node(n).root, 'srv/web/conf');
  const pid = (n: NodeName): number | undefined => servicePid(mesh.node(n).stateDir, SERVER(n));

  await applyObject(admin, 'modules', web(1));
  for (const n of NODES) await applyObject(admin, 'assignments', assignmentObject(`web-on-${n}`, 'web', n));
  for (const n of NODES) await waitApplied(admin, `web-on-${n}`, '1.0.0');
  const before = { a: pid('a')!, b: pid('b')! };
  assert.ok(isRunning(before.a) && isRunning(before.b));

  // 3. SIGKILL the control plane: every service keeps running, drift is still corrected, meshctl says unreachable.
  await cp.kill();
  for (const n of NODES)
    await waitFor(async () => (await unreachableSeconds(agents[n]))! > 0, 10_000, `agent ${n} to notice the outage`);
  for (const n of NODES) {
    assert.equal(pid(n), before[n], `node ${n}'s service keeps running (same pid)`);
    assert.ok(isRunning(before[n]));
    assert.equal(readFileSync(conf(n), 'utf8'), 'version=1\n');
  }
  const cli = await meshctl(cp.meshconfigPath, ['get', 'nodes']);
  assert.notEqual(cli.code, 0, 'meshctl get nodes fails');
  assert.match(cli.stderr, /unreachable/, cli.stderr);
  assert.doesNotMatch(cli.stderr, /\n\s+at /, 'no stack trace');

  for (const n of NODES) {
    rmSync(conf(n));
    process.kill(before[n], 'SIGKILL');
  }
  const restarted = { a: 0, b: 0 };
  for (const n of NODES) {
    await waitFor(
      () => {
        try {
          return readFileSync(conf(n), 'utf8') === 'version=1\n';
        } catch {
          return false;
        }
      },
      10_000,
      `node ${n}'s file to come back`,
    );
    restarted[n] = await waitFor(
      () => {
        const p = pid(n);
        return p !== before[n] && p;
      },
      10_000,
      `node ${n}'s service to restart`,
    );
    assert.ok(isRunning(restarted[n]));
  }

  // 4. Still down: SIGKILL agent b, let node b drift, restart it from its state dir alone (no --config, no --name).
  await agents.b.kill('SIGKILL');
  rmSync(conf('b'));
  process.kill(restarted.b, 'SIGKILL');
  agents.b = await mesh.agent('b');
  const started = logLines(agents.b).find((l) => l.msg === 'Started agent')!;
  assert.equal(started.node, 'b', 'its identity comes from its store');
  assert.ok(started.unreachableSince, 'it remembers the outage');
  await waitFor(
    () => {
      try {
        return readFileSync(conf('b'), 'utf8') === 'version=1\n';
      } catch {
        return false;
      }
    },
    10_000,
    "b's file restored by the cold start",
  );
  const coldB = await waitFor(
    () => {
      const p = pid('b');
      return p !== restarted.b && p;
    },
    10_000,
    "b's service to run again",
  );
  assert.ok(isRunning(coldB));
  assert.equal(pid('a'), restarted.a, 'node a was not disturbed');
  assert.deepEqual(
    pidsWithTag(`${RUN_TAG}-web-v1 `),
    [restarted.a, coldB].sort((x, y) => x - y),
    'one service per node, nothing leaked',
  );

  // 5. The control plane returns on the same address: both agents reconnect on their own and report.
  const back = new Date().toISOString();
  const cp2 = await mesh.controlPlane({ listen });
  const admin2 = mesh.admin(cp2);
  for (const n of NODES) {
    await waitFor(
      () => logLines(agents[n]).some((l) => l.msg === 'Reconnected to control plane'),
      15_000,
      `agent ${n} to reconnect`,
    );
    await waitFor(
      async () => {
        const s = ((await admin2.get('nodes', n)) as KubeObject & { status?: { controlPlaneLastContact?: string } })
          .status;
        return (s?.controlPlaneLastContact ?? '') >= back;
      },
      10_000,
      `node ${n}'s heartbeat after the return`,
    );
    assert.equal(await unreachableSeconds(agents[n]), 0);
  }
  const delivered = await waitFor(
    async () => {
      const events = (await admin2.list('events')).items as Array<
        KubeObject & { reason?: string; involvedObject?: { name?: string }; lastTimestamp?: string }
      >;
      const seen = (n: NodeName, reason: string): boolean =>
        events.some((e) => e.involvedObject?.name === n && e.reason === reason);
      return NODES.every((n) => seen(n, 'DriftCorrected') && seen(n, 'ControlPlaneUnreachable')) && events;
    },
    15_000,
    'what happened during the outage to be reported by both nodes',
  );
  assert.ok(delivered.length > 0);

  // New changes flow again: version 2 reaches both nodes.
  await applyObject(admin2, 'modules', web(2));
  for (const n of NODES) await waitApplied(admin2, `web-on-${n}`, '2.0.0');
  for (const n of NODES) {
    assert.equal(readFileSync(conf(n), 'utf8'), 'version=2\n');
    const d = (await admin2.get('declarations', n)) as KubeObject & {
      spec: { generation: number };
      status?: { appliedGeneration?: number };
    };
    assert.equal(d.status?.appliedGeneration, d.spec.generation, `node ${n} reports the new generation applied`);
  }
  assert.equal(pidsWithTag(`${RUN_TAG}-web-v1 `).length, 0, 'the v1 services were replaced');
  assert.equal(pidsWithTag(`${RUN_TAG}-web-v2 `).length, 2);
});
