import { test } from 'node:test';
import assert from 'node:assert/strict';
import { warningTexts } from '../../client/answers.ts';
import { warningHeader } from './admission-warnings.ts';

test('a warning text survives the Warning header: quotes and backslashes escaped, several per header', () => {
  const texts = ['node "a" does not exist', 'a \\ backslash', 'plain'];
  const headers = texts.map(warningHeader);
  assert.equal(headers[0], '299 - "node \\"a\\" does not exist"');
  assert.deepEqual(warningTexts(headers), texts);
  assert.deepEqual(warningTexts([headers.join(', ')]), texts, 'comma-joined as a proxy may join them');
  assert.deepEqual(warningTexts([warningHeader('naïve')]), ['na?ve'], 'a header value stays ASCII');
});
