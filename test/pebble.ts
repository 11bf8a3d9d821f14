/**
 * Debian's `pebble` (a real ACME CA) for tests, as ../shared recipes/acme-pebble.md measured it: its own TLS
 * certificate made with openssl, loopback ports only, `PEBBLE_VA_NOSLEEP=1`, no nonce rejection, no
 * authorization reuse, short certificates (`certificateValidityPeriod`), and a loopback DNS responder that
 * answers A 127.0.0.1 for every name (and an empty AAAA: pebble dials the first address it gets). The root
 * is regenerated at every start and fetched from the management port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get } from 'node:https';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, opensslSelfSigned } from '../agent/testing.ts';

/** A running pebble and its DNS responder. */
export interface Pebble {
  directoryUrl: string;
  /** The certificate of pebble's own HTTPS listeners (trust it to talk to pebble). */
  tlsCa: string;
  /** The issuing root of this start (leaf → intermediate → this root). */
  root: string;
  /** The port pebble sends HTTP-01 validations to (on 127.0.0.1). */
  httpPort: number;
  /** Stops pebble (it keeps nothing on disk); the DNS responder keeps running until `close()`. */
  kill(): Promise<void>;
  /** Stops everything and removes the temp dir. */
  close(): Promise<void>;
  log(): string;
}

/** Starts pebble with certificates valid for `validitySeconds`. */
export async function startPebble(opts: { validitySeconds: number }): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-pebble-'));
  const tlsCa = opensslSelfSigned({
    keyPath: join(dir, 'key.pem'),
    certPath: join(dir, 'cert.pem'),
    commonName: 'localhost',
    subjectAltName: 'DNS:localhost,IP:127.0.0.1',
    days: 2,
  }).cert;
  const [acmePort, mgmtPort, httpPort, tlsPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const dns = await dnsResponder();
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${mgmtPort}`,
      certificate: join(dir, 'cert.pem'),
      privateKey: join(dir, 'key.pem'),
      httpPort,
      tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
      certificateValidityPeriod: opts.validitySeconds,
    },
  };
  writeFileSync(join(dir, 'pebble.json'), JSON.stringify(config));
  const env = { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' };
  const child = spawn('pebble', ['-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${dns.port}`], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const agent = new Agent({ ca: tlsCa });
  const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  };
  try {
    await waitFor(
      () => fetchText(directoryUrl, agent),
      child,
      () => out,
    );
    const root = await fetchText(`https://127.0.0.1:${mgmtPort}/roots/0`, agent);
    return {
      directoryUrl,
      tlsCa,
      root,
      httpPort,
      kill,
      log: () => out,
      async close() {
        await kill();
        dns.socket.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await kill();
    dns.socket.close();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

function fetchText(url: string, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode}`))));
    }).on('error', reject);
  });
}

/** Polls until `probe` resolves (pebble is ready in about 300 ms); fails if pebble exits first. */
async function waitFor(probe: () => Promise<unknown>, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pebble exited: ${log()}`);
    try {
      await probe();
      return;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`pebble did not start: ${(e as Error).message}\n${log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A DNS responder on UDP 127.0.0.1: A 127.0.0.1 for every name, an empty NOERROR answer for anything else. */
async function dnsResponder(): Promise<{ socket: Socket; port: number }> {
  const socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    const reply = dnsReply(msg);
    if (reply) socket.send(reply, rinfo.port, rinfo.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return { socket, port: socket.address().port };
}

/** The answer to one DNS query (one question), or undefined when it is not one. */
export function dnsReply(msg: Buffer): Buffer | undefined {
  if (msg.length < 17 || msg.readUInt16BE(4) !== 1) return undefined;
  let i = 12;
  while (i < msg.length && msg[i] !== 0) i += (msg[i] ?? 0) + 1;
  const end = i + 5; // the name's zero byte, qtype, qclass
  if (end > msg.length) return undefined;
  const qtype = msg.readUInt16BE(i + 1);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(msg.readUInt16BE(0), 0); // id
  header.writeUInt16BE(0x8400 | (msg.readUInt16BE(2) & 0x0100), 2); // response, authoritative, RD echoed
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(qtype === 1 ? 1 : 0, 6);
  const question = msg.subarray(12, end);
  if (qtype !== 1) return Buffer.concat([header, question]);
  const answer = Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 127, 0, 0, 1]);
  return Buffer.concat([header, question, answer]);
}
