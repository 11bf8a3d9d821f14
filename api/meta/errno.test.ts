import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { errnoCode, isMissing } from './errno.ts';

test('errnoCode reads the code of a real system error, and nothing from anything else', () => {
  let caught: unknown;
  try {
    readFileSync('/nonexistent/meshctl-errno-test');
  } catch (e) {
    caught = e;
  }
  assert.equal(errnoCode(caught), 'ENOENT');
  assert.equal(isMissing(caught), true);
  assert.equal(errnoCode(new Error('plain')), undefined);
  assert.equal(errnoCode('ENOENT'), undefined);
  assert.equal(errnoCode(null), undefined);
  assert.equal(isMissing(Object.assign(new Error('x'), { code: 'EACCES' })), false);
});
