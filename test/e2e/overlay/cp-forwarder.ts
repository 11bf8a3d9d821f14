/**
 * How agents inside the test's network namespaces reach the control plane, which runs on 127.0.0.1 in the
 * root namespace (where the test's own client reaches it too), without giving any namespace a route out: a
 * small child inside each namespace listens on the control plane's port on that namespace's loopback and
 * passes every accepted connection (the socket itself, over the IPC channel) to the test process, which
 * connects it to the control plane. The agents' meshconfig stays as the control plane wrote it. A SIGKILLed
 * control plane is as unreachable from the namespaces as from anywhere.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { waitFor } from '../../../agent/testing.ts';

/** The child, run with `node -e` (no tsx: it starts in tens of milliseconds). */
const CHILD = `
const net = require('node:net');
const srv = net.createServer({ pauseOnConnect: true }, (s) => process.send('conn', s));
srv.listen(Number(process.argv[1]), '127.0.0.1', () => process.send('ready'));
process.on('disconnect', () => process.exit(0));
`;

/** A running forwarder; `stop()` ends its child. */
export interface Forwarder {
  pid: number;
  stop(): Promise<void>;
}

function splice(from: Socket, port: number): void {
  const to = connect(port, '127.0.0.1');
  from.pipe(to).pipe(from);
  from.on('error', () => to.destroy());
  to.on('error', () => from.destroy());
  from.on('close', () => to.destroy());
  to.on('close', () => from.destroy());
  from.resume();
}

/** Starts forwarding `127.0.0.1:port` inside namespace `ns` to `127.0.0.1:port` here. */
export async function forwardControlPlane(ns: string, port: number): Promise<Forwarder> {
  const child: ChildProcess = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', CHILD, String(port)], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  let ready = false;
  child.on('message', (msg, handle) => {
    if (msg === 'ready') ready = true;
    else if (msg === 'conn' && handle) splice(handle as Socket, port);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(() => ready || child.exitCode !== null, 10_000, `the forwarder in ${ns}`);
  if (!ready) throw new Error(`the forwarder in ${ns} exited with ${child.exitCode}`);
  return {
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
