import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandLine } from '../cli-args.ts';
import { parseByteSize } from './byte-size.ts';

test('sizes: bytes, Ki/Mi/Gi (with or without B); anything else, or less than 1 KiB, names the flag', () => {
  assert.equal(parseByteSize('log-buffer-size', '2048'), 2048);
  assert.equal(parseByteSize('log-buffer-size', '2Ki'), 2048);
  assert.equal(parseByteSize('log-buffer-size', '16MiB'), 16 * 2 ** 20);
  assert.equal(parseByteSize('log-buffer-size', '1Gi'), 2 ** 30);
  for (const bad of ['2k', '2KB', '512', '-1', '1.5Mi', '']) {
    assert.throws(
      () => parseByteSize('log-buffer-size', bad),
      /^Error: --log-buffer-size must be a size of at least 1024 bytes such as 2Ki/,
    );
  }
});

test('mesh-agent run --log-buffer-size sets the bound of the log buffer', () => {
  const opts = parseCommandLine(['run', '--state-dir', '/tmp/x', '--log-buffer-size', '2Ki']);
  assert.ok(opts !== 'help');
  assert.equal(opts.logBufferBytes, 2048);
  const dflt = parseCommandLine(['run', '--state-dir', '/tmp/x']);
  assert.ok(dflt !== 'help' && dflt.logBufferBytes === undefined, 'absent: the default (16 MiB)');
  assert.throws(
    () => parseCommandLine(['run', '--state-dir', '/tmp/x', '--log-buffer-size', 'lots']),
    /--log-buffer-size must be a size/,
  );
});
