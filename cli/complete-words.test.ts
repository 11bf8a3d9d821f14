// What __complete offers for each position of a command line (the words alone; names come from a map here,
// from the control plane in test/e2e/cli-completion.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FLAGS } from './command.ts';
import { complete, type CompletionSources } from './complete-words.ts';

const names: Record<string, string[]> = { nodes: ['alpha', 'beta'], jointokens: ['abcdef'], backups: ['nightly'] };
const sources: CompletionSources = {
  commands: ['get', 'apply', 'token', 'backup', 'completion', 'help'],
  flags: async (c) =>
    ({
      get: [FLAGS.output(['yaml', 'json']), { name: 'watch', short: 'w', type: 'boolean' as const }],
      apply: [FLAGS.filename, FLAGS.recursive],
      token: [],
      backup: [],
      completion: [],
      help: [],
    })[c],
  names: async (plural) => names[plural] ?? [],
};
const at = async (...words: string[]) => (await complete(words, sources)).candidates;

test('commands, filtered by the typed prefix, after global flags', async () => {
  assert.deepEqual(await at(''), sources.commands);
  assert.deepEqual(await at('--config', 'x', 'co'), ['completion']);
  assert.deepEqual(await at('-'), ['--config', '--help', '-h']);
  assert.deepEqual(await complete(['--config', ''], sources), { candidates: [], files: true });
  assert.deepEqual(await at('nosuch', ''), []);
});

test('kinds (plural, singular, short names), comma lists, all; names of the kind', async () => {
  assert.deepEqual(await at('get', 'no'), ['nodes', 'node', 'no']);
  assert.deepEqual(await at('get', 'a'), ['assignments', 'assignment', 'asg', 'applysets', 'applyset', 'aps', 'all']);
  assert.deepEqual(await at('get', 'nodes,mod'), ['nodes,modules', 'nodes,module', 'nodes,mod']);
  assert.deepEqual(await at('get', 'no', ''), ['alpha', 'beta']);
  assert.deepEqual(await at('get', 'Nodes', 'alpha', ''), ['beta'], 'a name already given is not offered again');
  assert.deepEqual(await at('get', 'node/b'), ['node/beta']);
  assert.deepEqual(await at('get', 'nodes,modules', ''), [], 'no names for a list of kinds');
  assert.deepEqual(await at('get', 'nodez', ''), []);
});

test('flags of the command and their values; a flag value is not taken for a positional', async () => {
  assert.deepEqual(await at('get', '--w'), ['--watch']);
  assert.deepEqual(await at('get', 'nodes', '-o', ''), ['yaml', 'json']);
  assert.deepEqual(await at('get', '-o', 'yaml', 'no'), ['nodes', 'node', 'no']);
  assert.deepEqual(await at('get', '-w', 'nodes', ''), ['alpha', 'beta']);
  assert.deepEqual(await complete(['apply', '-Rf', ''], sources), { candidates: [], files: true });
  assert.deepEqual(await at('apply', '-f', '-'), [], '-f - is stdin');
  assert.deepEqual(await at('get', '--', '-'), [], 'after -- nothing is a flag');
});

test('token subcommands and token names; completion shells; help topics', async () => {
  assert.deepEqual(await at('token', ''), ['create', 'list', 'delete']);
  assert.deepEqual(await at('token', 'delete', ''), ['abcdef']);
  assert.deepEqual(await at('completion', ''), ['bash', 'zsh']);
  assert.deepEqual(await at('help', 'to'), ['token']);
});

test('backup subcommands and, for pull, backup names', async () => {
  assert.deepEqual(await at('backup', ''), ['create', 'pull', 'list', 'verify', 'restore']);
  assert.deepEqual(await at('backup', 'pull', ''), ['nightly']);
  assert.deepEqual(await at('backup', 'list', ''), []);
});
