/**
 * What the Node controller's tests share: the real API server and store (in-process, port 0) through the real
 * HTTP client, the controller run by the controller manager on a FakeClock, and the agent's real heartbeat write
 * (a merge patch of Node status) carrying a deliberately wrong agent clock. Each test file calls
 * `nodeControllerTesting()` once at its top level (it registers the server's hooks).
 */
import { type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '../api/client/types.ts';
import { createJsonLogger, silentLogger } from '../api/meta/logger.ts';
import { FakeClock } from '../api/meta/fake-clock.ts';
import type { WorkQueue } from '../api/client/work-queue.ts';
import type { Condition, KubeObject } from '../api/meta/types.ts';
import type { NodeStatus } from '../api/v1alpha1/generated/index.ts';
import { eventually } from '../test/eventually.ts';
import { serverSuite } from '../test/server-suite.ts';
import { createNodeController } from './node-controller.ts';
import { createManager } from './runtime/manager.ts';

/** The tests' fake-clock start. */
export const T0 = Date.parse('2030-01-01T00:00:00Z');
/** One second, in ms. */
export const S = 1000;

/** The server and the helpers over it. */
export function nodeControllerTesting() {
  const suite = serverSuite();

  /**
   * A running Node controller on a fake clock; `writes(node)` counts the status writes it sent for a node,
   * `whileBusy()` those sent while `yieldTo` was busy.
   */
  async function startController(
    t: TestContext,
    start = T0,
    heartbeats?: { onBeat(fn: (node: string, atMs: number) => void): void },
    yieldTo?: WorkQueue,
  ): Promise<{
    clock: FakeClock;
    writes: (node: string) => number;
    whileBusy: () => number;
    stop: () => Promise<void>;
  }> {
    const clock = new FakeClock({ start });
    const sent: string[] = [];
    let whileBusy = 0;
    const recording: Client = {
      ...suite.client,
      updateStatus: (plural, obj, opts) => {
        sent.push(obj.metadata.name ?? '');
        if (yieldTo?.busy()) whileBusy++;
        return suite.client.updateStatus(plural, obj, opts);
      },
    };
    const manager = createManager({
      client: recording,
      logger: process.env.DBG ? createJsonLogger() : silentLogger,
      backoff: { baseMs: 20, maxMs: 200 },
    });
    manager.add(
      createNodeController({ manager, clock, ...(heartbeats ? { heartbeats } : {}), ...(yieldTo ? { yieldTo } : {}) }),
    );
    assert.equal(await manager.start(), true);
    let stopped = false;
    const stop = async (): Promise<void> => {
      if (!stopped) {
        stopped = true;
        await manager.stop();
      }
    };
    t.after(stop);
    return { clock, writes: (node) => sent.filter((n) => n === node).length, whileBusy: () => whileBusy, stop };
  }

  /** Lets the controller act on whatever is queued (real time: the server round trips are real). */
  const quiet = (): Promise<void> => new Promise((r) => setTimeout(r, 150));

  const statusOf = async (node: string): Promise<NodeStatus> =>
    ((await suite.client.get('nodes', node)) as KubeObject & { status?: NodeStatus }).status ?? {};
  const conditionOf = async (node: string, type: string): Promise<Condition | undefined> =>
    (await statusOf(node)).conditions?.find((c) => c.type === type);

  /** Waits until the node's condition `type` has `status` (and `reason` when given); returns the node's status. */
  async function waitCondition(node: string, type: string, status: string, reason?: string): Promise<NodeStatus> {
    return eventually(async () => {
      const s = await statusOf(node);
      const c = s.conditions?.find((x) => x.type === type);
      assert.equal(c?.status, status, `${node} ${type}: ${JSON.stringify(c)}`);
      if (reason) assert.equal(c?.reason, reason);
      return s;
    });
  }

  let beat = 0;
  /** The agent clock the last heartbeat carried. */
  const lastAgentClock = (): string => new Date(Date.parse('1999-01-01T00:00:00Z') + beat).toISOString();
  /** The agent's heartbeat write, with an agent clock from 1999 (which the control plane must not use). */
  async function heartbeat(node: string, appliedGeneration?: number): Promise<void> {
    const agentClock = new Date(Date.parse('1999-01-01T00:00:00Z') + ++beat).toISOString();
    const declaration = appliedGeneration === undefined ? {} : { appliedGeneration };
    await suite.client.patch(
      'nodes',
      node,
      { status: { controlPlaneLastContact: agentClock, agentVersion: '0.1.0', declaration } },
      { subresource: 'status' },
    );
  }

  const createNode = (name: string): Promise<KubeObject> =>
    suite.client.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name } });

  return { suite, startController, quiet, statusOf, conditionOf, waitCondition, heartbeat, lastAgentClock, createNode };
}
