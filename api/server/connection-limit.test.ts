import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { LogFields } from '../meta/logger.ts';
import { connectionLimit, logRefusedConnections, openFileLimit, RESERVED_FILES } from './connection-limit.ts';
import { listen } from './listen.ts';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             unlimited            unlimited            processes
Max open files            20000                65536                files
`;

test('the connection limit keeps a tenth of the open-file limit (at least RESERVED_FILES) for the store', () => {
  assert.equal(openFileLimit(LIMITS), 20000, 'the soft limit');
  assert.equal(openFileLimit(LIMITS.replace('20000  ', 'unlimited')), undefined);
  assert.equal(connectionLimit(20000), 18000);
  assert.equal(connectionLimit(65536), 58982);
  assert.equal(connectionLimit(1024), 1024 - RESERVED_FILES);
  assert.equal(connectionLimit(undefined), undefined);
  // A process started with `ulimit -n 400` reads 400 (Node raises its soft limit to the hard one, here both 400).
  const mod = join(import.meta.dirname, 'connection-limit.ts');
  const script = `import('${mod}').then((m) => console.log(m.connectionLimit(m.openFileLimit())))`;
  const out = execFileSync('bash', ['-c', `ulimit -n 400; exec node --import tsx -e "${script}"`], {
    encoding: 'utf8',
  });
  assert.equal(out.trim(), String(400 - RESERVED_FILES));
});

test('connections over the limit are closed at once and logged with what to raise, once per interval', () => {
  let t = 0;
  const lines: LogFields[] = [];
  const drop = logRefusedConnections({ info: () => {}, error: (_m, f) => lines.push(f ?? {}) }, 5, () => t);
  drop();
  drop();
  t = 9_999;
  drop();
  assert.equal(lines.length, 1, 'one line for the first refusal, none more within 10 s');
  t = 10_000;
  drop();
  assert.equal(lines.length, 2);
  assert.equal(lines[0].refused, 1);
  assert.equal(lines[1].refused, 3, 'the refusals since the previous line');
  assert.match(String(lines[1].hint), /LimitNOFILE/);
});

test('the server holds at most maxConnections open, logs the refused one and still serves the others', async (t) => {
  const logged: string[] = [];
  const logger = { info: () => {}, error: (msg: string, f?: LogFields) => logged.push(`${msg} ${JSON.stringify(f)}`) };
  const app = { handle: (_req: unknown, res: { end(s: string): void }) => res.end('ok'), close() {} };
  const server = await listen({ app, host: '127.0.0.1', port: 0, maxConnections: 2, logger });
  t.after(() => server.close());
  const sockets: Socket[] = [];
  t.after(() => sockets.forEach((s) => s.destroy()));
  const open = (): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const s = connect(server.port, '127.0.0.1', () => resolve(s)).on('error', reject);
      sockets.push(s);
    });
  const [a] = [await open(), await open()];
  const third = await open();
  const closed = await new Promise<boolean>((resolve) => {
    const wait = setTimeout(() => resolve(false), 10_000);
    third.on('close', () => resolve(true)).on('error', () => {});
    third.on('close', () => clearTimeout(wait)).resume();
  });
  assert.ok(closed, 'the third connection is closed by the server');
  const deadline = Date.now() + 10_000;
  while (logged.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(logged.length, 1, `logged: ${logged.join('\n')}`);
  assert.match(logged[0], /Refused connections over the open-connection limit.*"maxConnections":2.*LimitNOFILE/);
  const answer = await new Promise<string>((resolve) => {
    let text = '';
    a.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('ok')) resolve(text);
    });
    a.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
  });
  assert.match(answer, /^HTTP\/1\.1 200/);
});
