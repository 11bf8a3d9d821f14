import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventsTable, renderFields, titleCase } from './describe-fields.ts';

test('titleCase: camelCase keys become words; label-like keys are kept', () => {
  assert.equal(titleCase('observedGeneration'), 'Observed Generation');
  assert.equal(titleCase('uid'), 'UID');
  assert.equal(titleCase('dnsNames'), 'DNS Names');
  assert.equal(titleCase('app.kubernetes.io/name'), 'app.kubernetes.io/name');
});

test('fields: aligned per level, nested maps indented, lists of maps with "-", multi-line strings as blocks', () => {
  const lines = renderFields({
    spec: {
      site: 'home',
      endpoint: '10.0.0.1:51820',
      resources: [{ id: 'a', kind: 'File' }, { id: 'b' }],
      tags: ['x', 'y'],
      content: 'l1\nl2\n',
      empty: {},
    },
  });
  assert.deepEqual(lines, [
    'Spec:',
    '  Site:       home',
    '  Endpoint:   10.0.0.1:51820',
    '  Resources:',
    '    - Id:    a',
    '      Kind:  File',
    '    - Id:  b',
    '  Tags:',
    '    x',
    '    y',
    '  Content:',
    '    l1',
    '    l2',
    '  Empty:      <none>',
  ]);
});

test('conditions render as a table', () => {
  const lines = renderFields({
    status: {
      conditions: [
        { type: 'Ready', status: 'True', reason: 'Joined', lastTransitionTime: '2026-01-01T00:00:00Z', message: 'ok' },
      ],
    },
  });
  assert.deepEqual(lines, [
    'Status:',
    '  Conditions:',
    '    Type    Status   Reason   LastTransitionTime     Message',
    '    ----    ------   ------   ------------------     -------',
    '    Ready   True     Joined   2026-01-01T00:00:00Z   ok',
  ]);
});

test('events table: repeats show (xN over AGE)', () => {
  const now = Date.parse('2026-01-01T01:00:00Z');
  const lines = eventsTable(
    [
      {
        type: 'Warning',
        reason: 'RenewalFailed',
        message: 'acme down',
        count: 3,
        firstTimestamp: '2026-01-01T00:30:00Z',
        lastTimestamp: '2026-01-01T00:59:00Z',
        source: { component: 'certificate-controller' },
      },
    ],
    2,
    now,
  );
  assert.match(lines[2], /^ {2}Warning +RenewalFailed +60s \(x3 over 30m\) +certificate-controller +acme down$/);
});
