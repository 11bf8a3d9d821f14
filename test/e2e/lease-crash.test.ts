// A node's heartbeats are a lease in the control plane's memory, persisted lazily (api/server/access/node-leases.ts):
// after a SIGKILL of the real process, the lastSeen its restart holds is at most one persist interval (plus the
// heartbeats' spacing and one persist batch) older than the last heartbeat it answered, and never later than the
// kill — also when the agent's clock runs ahead, since lastSeen is the control plane's own observation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rfc3339 } from '../../api/meta/timestamp.ts';
import { LEASE_PERSIST_MS, PERSIST_BATCH_MS } from '../../api/server/access/node-leases.ts';
import { httpRequest, spawnControlPlane, type ControlPlaneProcess } from '../harness.ts';
import { API, asNode, createToken, newNodeKey, postJoin } from './join-helpers.ts';

const MERGE = { 'content-type': 'application/merge-patch+json' };
const HEARTBEAT_MS = 2_000;
/** The agent's clock runs this far ahead of the control plane's. */
const AGENT_CLOCK_AHEAD_MS = 60_000;

test('after a SIGKILL the restarted control plane holds a lastSeen at most one persist interval before the last heartbeat, never after the kill', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-lease-crash-'));
  let cp: ControlPlaneProcess | undefined = await spawnControlPlane({ dataDir });
  try {
    const { token } = await createToken(cp.config);
    const joined = await postJoin(cp.config, { token, nodeName: 'leased', nodeKey: newNodeKey() });
    assert.equal(joined.status, 200, joined.text);
    const node = asNode(cp.config, String(joined.json.credential));

    // Heartbeats as the agent sends them (agent/sync/reporter.ts), for longer than a persist interval and a half:
    // the first is persisted at once, one about a persist interval later, and the last ones are only in memory.
    const started = Date.now();
    let lastAnswered = 0;
    let lastSent = 0;
    let widestGap = 0;
    while (Date.now() - started < LEASE_PERSIST_MS * 1.5) {
      const sent = Date.now();
      if (lastSent) widestGap = Math.max(widestGap, sent - lastSent);
      lastSent = sent;
      const status = {
        controlPlaneLastContact: rfc3339(sent + AGENT_CLOCK_AHEAD_MS),
        agentVersion: 'v1',
        declaration: {},
      };
      const r = await httpRequest(node, 'PATCH', `${API}/nodes/leased/status`, { status }, MERGE);
      assert.equal(r.status, 200, r.text);
      lastAnswered = Date.now();
      await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS));
    }
    await cp.kill();
    const killedAt = Date.now();
    cp = await spawnControlPlane({ dataDir });

    const stored = await httpRequest(cp.config, 'GET', `${API}/nodes/leased`);
    assert.equal(stored.status, 200, stored.text);
    const lastSeen = Date.parse(String(stored.json.status?.lastSeen));
    assert.ok(Number.isFinite(lastSeen), `a stored lastSeen: ${stored.text}`);
    assert.ok(lastSeen <= killedAt, `lastSeen ${rfc3339(lastSeen)} must not be after the kill at ${rfc3339(killedAt)}`);
    const stale = lastAnswered - lastSeen;
    const bound = LEASE_PERSIST_MS + widestGap + PERSIST_BATCH_MS;
    assert.ok(
      stale <= bound,
      `lastSeen is ${stale} ms before the last heartbeat answered: must be at most ${bound} ms`,
    );
  } finally {
    await cp?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
