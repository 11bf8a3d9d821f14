// The list-then-watch loop against the real API server (test/harness.ts), on a fake clock: a handler that
// throws makes it relist, a silent stream is reopened after idleTimeoutMs, wake() ends a backoff, and a
// failure onFailure rethrows ends the loop. (410 relists are covered by the informer's tests.)
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../test/harness.ts';
import { FakeClock, settle } from '../meta/fake-clock.ts';
import { silentLogger, type Logger } from '../meta/logger.ts';
import { createClient } from './http-client.ts';
import { startListWatch } from './list-watch.ts';

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const node = (name: string) => ({ apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name }, spec: {} });

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await settle();
  }
}

test('a throwing handler relists; a silent stream is reopened; wake() ends the backoff', async () => {
  const srv = await startServer({ insecure: true });
  cleanups.push(() => srv.stop());
  await srv.request('POST', '/apis/meshctl.dev/v1alpha1/nodes', node('a'));
  const client = createClient(srv.config);
  cleanups.push(() => client.close());
  const clock = new FakeClock();
  const msgs: string[] = [];
  const logger: Logger = { info: (m) => msgs.push(m), error: (m) => msgs.push(m) };
  const lists: string[][] = [];
  const events: string[] = [];
  const failures: string[] = [];
  let contacts = 0;
  let fail = true;
  const lw = startListWatch({
    client,
    plural: 'nodes',
    clock,
    logger,
    idleTimeoutMs: 1000,
    onList: (items) => {
      lists.push(items.map((o) => o.metadata.name as string));
    },
    onEvent: (ev) => {
      if (fail) {
        fail = false;
        throw new Error('store is gone');
      }
      events.push(`${ev.type} ${ev.object.metadata.name}`);
    },
    onContact: () => {
      contacts++;
    },
    onFailure: (e) => {
      failures.push((e as Error).message);
    },
  });
  cleanups.push(() => lw.stop());
  await until('the list and an open watch', () => contacts === 2);
  assert.deepEqual(lists, [['a']]);

  await srv.request('POST', '/apis/meshctl.dev/v1alpha1/nodes', node('b'));
  await until('the handler failure', () => failures.length === 1);
  assert.deepEqual(failures, ['store is gone']);
  clock.advance(250);
  await until('a relist after the backoff', () => lists.length === 2 && contacts === 4);
  assert.deepEqual(lists[1], ['a', 'b'], 'the event the handler failed on is seen again');

  clock.advance(1000);
  await until('the silent stream closed', () => msgs.includes('Watch ended without events'));
  assert.equal(contacts, 4, 'waiting out the backoff');
  lw.wake();
  await until('the watch reopened at once', () => contacts === 5);
  await srv.request('POST', '/apis/meshctl.dev/v1alpha1/nodes', node('c'));
  await until('events after the reopen', () => events.length === 1);
  assert.deepEqual(events, ['ADDED c']);
  assert.equal(lists.length, 2, 'reopened from the last resourceVersion, not relisted');
  await lw.stop();
});

test('a failure onFailure rethrows ends the loop with that error', async () => {
  const srv = await startServer({ insecure: true });
  cleanups.push(() => srv.stop());
  const client = createClient(srv.config);
  cleanups.push(() => client.close());
  const lw = startListWatch({
    client,
    plural: 'nosuchthings',
    logger: silentLogger,
    clock: new FakeClock(),
    onList: () => {},
    onEvent: () => {},
    onFailure: (e) => {
      throw e;
    },
  });
  await assert.rejects(lw.done, (e: Error & { code?: number }) => e.code === 404);
  await lw.stop();
});
