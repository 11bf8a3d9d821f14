import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestAttributes, Verb } from './auth.ts';
import { nodeAuthorizer, nodeRefusal } from './node-authorizer.ts';

const node = { kind: 'node', name: 'a' } as const;
const admin = { kind: 'admin' } as const;

function attrs(
  verb: Verb,
  plural?: string,
  name?: string,
  subresource?: string,
  fieldSelector?: string,
): RequestAttributes {
  const path = plural
    ? `/apis/meshctl.dev/v1alpha1/${plural}${name ? `/${name}` : ''}${subresource ? `/${subresource}` : ''}`
    : '/apis';
  return {
    verb,
    path,
    ...(plural ? { plural } : {}),
    ...(name ? { name } : {}),
    ...(subresource ? { subresource } : {}),
    ...(fieldSelector ? { fieldSelector } : {}),
  };
}

const allowed = (a: RequestAttributes): boolean => nodeAuthorizer(node, a) === undefined;

test('node authorizer: the admin may do everything', () => {
  for (const a of [
    attrs('delete', 'nodes', 'b'),
    attrs('list', 'jointokens'),
    attrs('create', 'modules'),
    attrs('get', undefined),
  ]) {
    assert.equal(nodeAuthorizer(admin, a), undefined);
  }
});

test('node authorizer: a node reads its own Node and Declaration, and the Mesh', () => {
  for (const plural of ['nodes', 'declarations']) {
    assert.ok(allowed(attrs('get', plural, 'a')));
    assert.ok(allowed(attrs('get', plural, 'a', 'status')));
    assert.ok(allowed(attrs('watch', plural, 'a')), 'the /watch/<plural>/<self> path');
    assert.ok(allowed(attrs('list', plural, undefined, undefined, 'metadata.name=a')));
    assert.ok(allowed(attrs('watch', plural, undefined, undefined, 'metadata.name==a')));
    assert.ok(
      allowed(attrs('list', plural, undefined, undefined, 'spec.site=x,metadata.name=a')),
      'extra terms only narrow it',
    );
  }
  for (const verb of ['get', 'list', 'watch'] as const)
    assert.ok(allowed(attrs(verb, 'meshes', verb === 'get' ? 'mesh' : undefined)));
  assert.ok(allowed(attrs('get', undefined)), 'discovery');
});

test('node authorizer: a node writes only the status of its own Node and Declaration, its events and its logs', () => {
  for (const plural of ['nodes', 'declarations']) {
    assert.ok(allowed(attrs('patch', plural, 'a', 'status')));
    assert.ok(allowed(attrs('update', plural, 'a', 'status')));
  }
  assert.ok(allowed(attrs('create', 'events')));
  assert.ok(allowed(attrs('create', 'nodes', 'a', 'logs')));
});

test('node authorizer: everything else is refused, saying what and why', () => {
  const refused: Array<[RequestAttributes, RegExp]> = [
    [
      attrs('get', 'declarations', 'b'),
      /declarations.meshctl.dev "b" is forbidden: User "system:node:a" cannot get resource "declarations".*its own Declaration \("a"\)/,
    ],
    [attrs('get', 'nodes', 'b'), /own Node/],
    [attrs('patch', 'nodes', 'b', 'status'), /cannot patch resource "nodes\/status"/],
    [attrs('list', 'nodes'), /cannot list resource "nodes".*only with fieldSelector=metadata.name=a/],
    [attrs('watch', 'declarations'), /cannot watch/],
    [attrs('list', 'nodes', undefined, undefined, 'metadata.name=b'), /fieldSelector=metadata.name=a/],
    [attrs('list', 'nodes', undefined, undefined, 'metadata.name!=b'), /fieldSelector/],
    [attrs('list', 'nodes', undefined, undefined, 'bad selector ((('), /fieldSelector/],
    [attrs('update', 'nodes', 'a'), /cannot update resource "nodes".*write its status/],
    [attrs('patch', 'declarations', 'a'), /write its status/],
    [attrs('delete', 'nodes', 'a'), /cannot delete/],
    [attrs('create', 'nodes'), /cannot create resource "nodes"/],
    [attrs('create', 'modules'), /cannot create resource "modules".*may not access modules/],
    [attrs('list', 'assignments'), /may not access assignments/],
    [attrs('get', 'jointokens', 'abcdef'), /may not access jointokens/],
    [attrs('patch', 'meshes', 'mesh'), /only read the Mesh/],
    [attrs('patch', 'meshes', 'mesh', 'status'), /only read the Mesh/],
    [attrs('list', 'events'), /only create events/],
    [attrs('delete', 'events', 'x'), /only create events/],
    [attrs('get', 'nodes', 'a', 'logs'), /only post its own logs/],
    [attrs('create', 'nodes', 'b', 'logs'), /own Node/],
  ];
  for (const [a, message] of refused) {
    const err = nodeAuthorizer(node, a);
    assert.ok(err, `${a.verb} ${a.path} ${a.fieldSelector ?? ''} is refused`);
    assert.equal(err.code, 403);
    assert.equal(err.reason, 'Forbidden');
    assert.match(err.message, message, `${a.verb} ${a.path}`);
  }
  assert.equal(nodeRefusal('a', attrs('delete', undefined)), 'a node may only read the discovery documents');
});
