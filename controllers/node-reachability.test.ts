import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Condition } from '../api/meta/types.ts';
import type { Mesh } from '../api/v1alpha1/generated/index.ts';
import {
  DEFAULT_GRACE_MS,
  HeartbeatTracker,
  declarationVerdict,
  formatDuration,
  gracePeriodMs,
  reachabilityVerdict,
} from './node-reachability.ts';

// The pure decisions, with time injected: every `now`, heartbeat and start time is a number chosen here.

const T0 = Date.parse('2030-01-01T00:00:00Z');
const S = 1000;

const condition = (status: Condition['status'], reason: string, message = ''): Condition => ({
  type: 'Reachable',
  status,
  reason,
  message,
  lastTransitionTime: '2029-12-31T00:00:00Z',
});

const mesh = (reachabilityGracePeriod?: string): Mesh => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Mesh',
  metadata: { name: 'mesh' },
  spec: reachabilityGracePeriod ? { reachabilityGracePeriod } : {},
});

describe('grace period', () => {
  it('comes from the Mesh, 40 s when it sets none or nothing usable', () => {
    assert.equal(DEFAULT_GRACE_MS, 40_000);
    assert.equal(gracePeriodMs(undefined), 40_000);
    assert.equal(gracePeriodMs(mesh()), 40_000);
    assert.equal(gracePeriodMs(mesh('2s')), 2000);
    assert.equal(gracePeriodMs(mesh('0')), 40_000);
  });

  it('formats durations for messages', () => {
    assert.equal(formatDuration(47_400), '47s');
    assert.equal(formatDuration(2000), '2s');
    assert.equal(formatDuration(500), '500ms');
    assert.equal(formatDuration(190_000), '3m10s');
  });
});

describe('reachabilityVerdict', () => {
  const base = { graceMs: 40 * S, watchingSince: T0 - 3600 * S };

  it('is Unknown/NeverSeen before the first heartbeat, with nothing to look at later', () => {
    const v = reachabilityVerdict({ ...base, now: T0 });
    assert.deepEqual(v, {
      status: 'Unknown',
      reason: 'NeverSeen',
      message: "no heartbeat has been received from the node's agent",
    });
  });

  it('is True until the grace period after the last heartbeat, and asks to look again exactly then', () => {
    const v = reachabilityVerdict({ ...base, now: T0 + 12 * S, lastHeartbeat: T0 });
    assert.equal(v.status, 'True');
    assert.equal(v.reason, 'HeartbeatReceived');
    assert.equal(v.message, 'heartbeats arrive within the grace period (40s)');
    assert.equal(v.recheckInMs, 28 * S);
    assert.equal(reachabilityVerdict({ ...base, now: T0 + 40 * S - 1, lastHeartbeat: T0 }).recheckInMs, 1);
  });

  it('is False/HeartbeatMissed once the grace period has passed, saying for how long', () => {
    const v = reachabilityVerdict({
      ...base,
      now: T0 + 47 * S,
      lastHeartbeat: T0,
      previous: condition('True', 'HeartbeatReceived'),
    });
    assert.deepEqual(v, {
      status: 'False',
      reason: 'HeartbeatMissed',
      message: 'no heartbeat for 47s (grace period 40s)',
    });
    const exact = reachabilityVerdict({ ...base, now: T0 + 40 * S, lastHeartbeat: T0 });
    assert.equal(exact.status, 'False');
  });

  it('keeps the message it flipped with while the node stays silent (no rewrite every look)', () => {
    const previous = condition('False', 'HeartbeatMissed', 'no heartbeat for 40s (grace period 40s)');
    const v = reachabilityVerdict({ ...base, now: T0 + 3600 * S, lastHeartbeat: T0, previous });
    assert.deepEqual(v, {
      status: 'False',
      reason: 'HeartbeatMissed',
      message: 'no heartbeat for 40s (grace period 40s)',
    });
  });

  it('is True again as soon as a heartbeat arrives', () => {
    const previous = condition('False', 'HeartbeatMissed', 'no heartbeat for 40s (grace period 40s)');
    assert.equal(
      reachabilityVerdict({ ...base, now: T0 + 100 * S, lastHeartbeat: T0 + 100 * S, previous }).status,
      'True',
    );
  });

  it("after a control-plane start, keeps every node's condition for one grace period before judging silence", () => {
    const watchingSince = T0;
    const stale = T0 - 300 * S;
    const wasUp = reachabilityVerdict({
      graceMs: 40 * S,
      watchingSince,
      now: T0 + 10 * S,
      lastHeartbeat: stale,
      previous: condition('True', 'HeartbeatReceived', 'up'),
    });
    assert.deepEqual(wasUp, { status: 'True', reason: 'HeartbeatReceived', message: 'up', recheckInMs: 30 * S });
    const wasDown = reachabilityVerdict({
      graceMs: 40 * S,
      watchingSince,
      now: T0 + 10 * S,
      lastHeartbeat: stale,
      previous: condition('False', 'HeartbeatMissed', 'down'),
    });
    assert.equal(wasDown.status, 'False', 'a node that was down is not called reachable on a restart');
    const later = reachabilityVerdict({
      graceMs: 40 * S,
      watchingSince,
      now: T0 + 40 * S,
      lastHeartbeat: stale,
      previous: condition('True', 'HeartbeatReceived', 'up'),
    });
    assert.deepEqual(later, {
      status: 'False',
      reason: 'HeartbeatMissed',
      message: 'no heartbeat for 5m40s (grace period 40s)',
    });
  });

  it('gives a node heard just before a control-plane start the whole grace period from the start', () => {
    const v = reachabilityVerdict({ graceMs: 40 * S, watchingSince: T0, now: T0 + 5 * S, lastHeartbeat: T0 - 20 * S });
    assert.equal(v.status, 'True');
    assert.equal(v.recheckInMs, 35 * S);
  });
});

describe('declarationVerdict', () => {
  it('is Applied once the node applied the desired generation', () => {
    assert.deepEqual(declarationVerdict({ desired: 3, applied: 3 }), {
      status: 'True',
      reason: 'Applied',
      message: 'the node applied declaration generation 3',
    });
  });

  it('is Pending while the desired generation is newer than the applied one, saying why when the node is away', () => {
    assert.deepEqual(declarationVerdict({ desired: 3, applied: 2, reachable: 'True' }), {
      status: 'False',
      reason: 'Pending',
      message: 'declaration generation 3 is pending: the node last applied generation 2',
    });
    assert.equal(
      declarationVerdict({ desired: 3, applied: 2, reachable: 'False' }).message,
      'declaration generation 3 is pending: the node last applied generation 2; the node is unreachable and applies it when it returns',
    );
    assert.equal(
      declarationVerdict({ desired: 1 }).message,
      'declaration generation 1 is pending: the node has not applied any generation yet',
    );
  });

  it('is NotApplied when the agent holds the current generation and reports it could not apply it', () => {
    const failed: Condition = {
      type: 'Applied',
      status: 'False',
      reason: 'NotApplied',
      message: '1 of 2 resources not applied: web/conf Failed',
      lastTransitionTime: '2030-01-01T00:00:00Z',
    };
    assert.deepEqual(
      declarationVerdict({ desired: 3, applied: 2, declarationApplied: failed, agentHoldsCurrent: true }),
      {
        status: 'False',
        reason: 'NotApplied',
        message:
          'declaration generation 3 did not apply (the node last applied generation 2): 1 of 2 resources not applied: web/conf Failed',
      },
    );
    assert.equal(
      declarationVerdict({ desired: 3, applied: 2, declarationApplied: failed, agentHoldsCurrent: false }).reason,
      'Pending',
      'an older report is no news about this generation',
    );
  });

  it('is Waiting when the agent holds the current generation and applied all but what waits for material', () => {
    const waiting: Condition = {
      type: 'Applied',
      status: 'False',
      reason: 'Waiting',
      message: '1 of 2 resources not applied: web/cert Waiting: File /c waits for the cert of certificate "web"',
      lastTransitionTime: '2030-01-01T00:00:00Z',
    };
    assert.deepEqual(
      declarationVerdict({ desired: 3, applied: 2, declarationApplied: waiting, agentHoldsCurrent: true }),
      {
        status: 'False',
        reason: 'Waiting',
        message:
          'declaration generation 3 waits for material from the control plane (the node last applied generation 2): 1 of 2 resources not applied: web/cert Waiting: File /c waits for the cert of certificate "web"',
      },
    );
  });

  it('is Unknown before a Declaration exists', () => {
    assert.deepEqual(declarationVerdict({ applied: 2 }), {
      status: 'Unknown',
      reason: 'NoDeclaration',
      message: 'the node has no Declaration yet',
    });
  });
});

describe('HeartbeatTracker', () => {
  it('counts a changed heartbeat field as a heartbeat at its own time, and what it found at start as none', () => {
    let now = T0;
    const tracker = new HeartbeatTracker({ now: () => now });
    tracker.observe('ADDED', 'a', '2001-01-01T00:00:00.000Z');
    assert.equal(tracker.watchingSince('a'), T0);
    assert.equal(tracker.heardAt('a'), undefined, 'what was there at start is not news');
    now = T0 + 5 * S;
    tracker.observe('MODIFIED', 'a', '2001-01-01T00:00:00.000Z');
    assert.equal(tracker.heardAt('a'), undefined, "another writer's change (same heartbeat field) is no heartbeat");
    tracker.observe('MODIFIED', 'a', '1999-01-01T00:00:00.000Z');
    assert.equal(tracker.heardAt('a'), T0 + 5 * S, "the control plane's time, whatever the agent's clock says");
    tracker.observe('DELETED', 'a', undefined);
    assert.equal(tracker.watchingSince('a'), undefined);
  });

  it('hears the first heartbeat of a node created while it watches', () => {
    let now = T0;
    const tracker = new HeartbeatTracker({ now: () => now });
    tracker.observe('ADDED', 'b', undefined);
    now += S;
    tracker.observe('MODIFIED', 'b', 'x');
    assert.equal(tracker.heardAt('b'), T0 + S);
  });
});
