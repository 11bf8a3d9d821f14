import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs, refusePositionals, unknownOption, type FlagSpec } from './flags.ts';
import { UsageError } from './usage-error.ts';

const specs: FlagSpec[] = [
  { name: 'output', short: 'o', type: 'string', values: ['yaml', 'json', 'wide'], help: '' },
  { name: 'watch', short: 'w', type: 'boolean', help: '' },
  { name: 'recursive', short: 'R', type: 'boolean', help: '' },
  { name: 'filename', short: 'f', type: 'strings', help: '' },
  { name: 'dry-run', type: 'string', help: '' },
];

test('kubectl-style flag forms, anywhere among positionals', () => {
  const a = parseArgs(
    ['nodes', '-oyaml', 'a', '--watch', '-f', 'x.yaml', '--filename=y.yaml', '-f', '-', '--dry-run=server', 'b'],
    specs,
  );
  assert.deepEqual(a.positionals, ['nodes', 'a', 'b']);
  assert.equal(a.str('output'), 'yaml');
  assert.ok(a.bool('watch'));
  assert.deepEqual(a.list('filename'), ['x.yaml', 'y.yaml', '-']);
  assert.equal(a.str('dry-run'), 'server');
  assert.equal(parseArgs(['-o', 'json'], specs).str('output'), 'json');
  assert.equal(parseArgs(['-o=wide'], specs).str('output'), 'wide');
});

test('grouped short booleans with a trailing value flag; -- ends flags; --flag=false', () => {
  const a = parseArgs(['-wRf', 'dir', '--', '-o'], specs);
  assert.ok(a.bool('watch') && a.bool('recursive'));
  assert.deepEqual(a.list('filename'), ['dir']);
  assert.deepEqual(a.positionals, ['-o']);
  assert.equal(parseArgs(['--watch=false'], specs).bool('watch'), false);
});

test('usage errors: unknown flags, missing values, values not allowed', () => {
  assert.throws(
    () => parseArgs(['--nope'], specs),
    (e) => e instanceof UsageError && /unknown flag: --nope/.test(e.message),
  );
  assert.throws(() => parseArgs(['-x'], specs), /unknown shorthand flag: 'x'/);
  assert.throws(() => parseArgs(['-o'], specs), /flag needs an argument: -o/);
  assert.throws(() => parseArgs(['-o', 'xml'], specs), /invalid argument "xml" for "-o" flag/);
});

test('a program may word unknown flags its own way; the flags a parse saw are the ones it returns', () => {
  const unknownFlag = unknownOption;
  assert.throws(
    () => parseArgs(['--bogus'], specs, { unknownFlag }),
    (e) => e instanceof UsageError && e.message === "Unknown option '--bogus'",
  );
  assert.throws(() => parseArgs(['-wx'], specs, { unknownFlag }), { message: "Unknown option '-x'" });
  const a = parseArgs(['run', '--dry-run', 'x', '-f', 'a', '--filename=b'], specs, { unknownFlag });
  assert.deepEqual(
    [a.positionals, a.str('dry-run'), a.list('filename'), a.str('output')],
    [['run'], 'x', ['a', 'b'], undefined],
  );
  assert.throws(() => refusePositionals(a), {
    message: "Unexpected argument 'run'. This command does not take positional arguments",
  });
  refusePositionals(parseArgs(['-w'], specs));
});
