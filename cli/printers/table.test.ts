import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/meta/types.ts';
import { kindByKind } from '../../api/v1alpha1/kinds.ts';
import type { KindInfo } from '../../api/v1alpha1/kind-info.ts';
import { formatCell, renderTable } from './table.ts';
import { renderObjects } from './output.ts';

const now = Date.parse('2026-01-01T12:00:00Z');
const kind: KindInfo = {
  kind: 'Widget',
  plural: 'widgets',
  singular: 'widget',
  shortNames: [],
  hasStatus: true,
  columns: [
    { name: 'Site', jsonPath: '.spec.site', type: 'string' },
    { name: 'Ready', jsonPath: '.status.conditions[?(@.type=="Ready")].status', type: 'string' },
    { name: 'Seen', jsonPath: '.status.lastSeen', type: 'date' },
    { name: 'Endpoint', jsonPath: '.spec.endpoint', type: 'string', priority: 1 },
  ],
};

function widget(name: string, spec: Record<string, unknown>, status: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Widget',
    metadata: { name, creationTimestamp: '2026-01-01T11:57:00Z', labels: { site: String(spec.site) } },
    spec,
    status,
  };
}

const objects = [
  widget(
    'a',
    { site: 'home', endpoint: '10.0.0.1:51820' },
    { conditions: [{ type: 'Ready', status: 'True' }], lastSeen: '2026-01-01T11:59:50Z' },
  ),
  widget('longer-name', { site: 'office' }),
];

test('table: NAME, the kind columns without priority ones, AGE; aligned with three spaces', () => {
  assert.equal(
    renderTable(kind, objects, { now }),
    [
      'NAME          SITE     READY   SEEN   AGE',
      'a             home     True    10s    3m',
      'longer-name   office                  3m',
      '',
    ].join('\n'),
  );
});

test('wide table adds priority columns; --show-labels adds LABELS; kind prefix for several kinds', () => {
  const text = renderTable(kind, objects, { now, wide: true, showLabels: true, kindPrefix: true });
  const [header, first] = text.split('\n');
  assert.match(header, /^NAME +SITE +READY +SEEN +ENDPOINT +AGE +LABELS$/);
  assert.match(first, /^widget\/a +home +True +10s +10\.0\.0\.1:51820 +3m +site=home$/);
});

test('cells: lists joined, objects as JSON, booleans and numbers as text, missing values empty', () => {
  assert.equal(formatCell(['a.example', 'b.example'], { type: 'string' }), 'a.example,b.example');
  assert.equal(formatCell(false, { type: 'boolean' }), 'false');
  assert.equal(formatCell(0, { type: 'integer' }), '0');
  assert.equal(formatCell({ a: 1 }, { type: 'string' }), '{"a":1}');
  assert.equal(formatCell([], { type: 'string' }), '');
  assert.equal(formatCell(undefined, { type: 'date' }), '');
});

test('the real Node kind prints its registry columns', () => {
  const node = kindByKind('Node');
  assert.ok(node);
  const text = renderTable(node, [widget('n1', { site: 'home' })], { now });
  assert.match(text.split('\n')[0], /^NAME +SITE +.*AGE$/);
});

test('-o name/json/yaml: one object as itself, several as a List', async () => {
  const singular = () => 'widget';
  assert.equal(await renderObjects(objects, 'name', { single: false, singular }), 'widget/a\nwidget/longer-name\n');
  const one = JSON.parse(await renderObjects(objects.slice(0, 1), 'json', { single: true, singular }));
  assert.equal(one.kind, 'Widget');
  const list = JSON.parse(await renderObjects(objects, 'json', { single: false, singular }));
  assert.equal(list.kind, 'List');
  assert.equal(list.items.length, 2);
  const yaml = await renderObjects(objects.slice(0, 1), 'yaml', { single: true, singular });
  assert.match(yaml, /^apiVersion: meshctl\.dev\/v1alpha1\nkind: Widget\nmetadata:\n  name: a\n/);
});

test("an Event's AGE is since it last happened, not since it reached the server", () => {
  const events = kindByKind('Event');
  assert.ok(events);
  const event = (last?: string): KubeObject => ({
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Event',
    metadata: { name: 'e', creationTimestamp: '2026-01-01T11:59:58Z' },
    ...(last ? { firstTimestamp: '2026-01-01T11:00:00Z', lastTimestamp: last } : {}),
  });
  const ageOf = (obj: KubeObject): string | undefined =>
    renderTable(events, [obj], { now }).split('\n')[1]?.split(/ +/).at(-1);
  assert.equal(ageOf(event('2026-01-01T11:50:00Z')), '10m', 'delivered 2s ago, happened 10m ago');
  assert.equal(ageOf(event()), '2s', 'without timestamps: since it was created');
});
