/**
 * The `WireGuard` driver: a WireGuard interface made with `ip` (the kernel module) or `wireguard-go`
 * (userspace) where the kernel has none, configured with `wg syncconf` (it changes only what differs, so
 * working sessions survive a change of peers) and `ip addr`/`ip link`. When nothing differs, nothing is
 * touched. Removal is `ip link del` (wireguard-go exits with its interface). The private key is the node's
 * (agent/overlay/wireguard-key.ts), passed to `wg` in a 0600 file that lives only for the call. The tool calls and the pure diff are in
 * agent/overlay/.
 *
 * `interfaceName` replaces the declared name on this machine (`mesh-agent run --wireguard-interface`):
 * wireguard-go's sockets (/run/wireguard/IF.sock) are shared by every network namespace of a machine, so
 * agents sharing one machine need names of their own.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WireGuardSpec } from '../../api/v1alpha1/generated/host-resource.ts';
import type { Driver } from '../engine/types.ts';
import { wgConfigText, wireGuardDiff, type WireGuardObserved } from '../overlay/wg-config.ts';
import { createWireGuardLink, ipLink, runTool, wgDump } from '../overlay/wg-tools.ts';
import type { WireGuardKeyPair } from '../overlay/wireguard-key.ts';

/** Options of createWireGuardDriver. */
export interface WireGuardDriverOptions {
  /** The node's key pair (loaded at start). */
  key: () => WireGuardKeyPair;
  /** This machine's name for the interface, replacing the declared one. */
  interfaceName?: string;
}

const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';
const NO_REDIRECTS = ['all', 'default'].map((c) => `/proc/sys/net/ipv4/conf/${c}/send_redirects`);

async function forwarding(): Promise<boolean> {
  return (await readFile(IP_FORWARD, 'utf8')).trim() === '1';
}

/**
 * `wg syncconf` from a 0600 file in the agent's state dir, removed right after (wg cannot read the socket
 * Node gives a child as stdin: `fopen: No such device or address`).
 */
async function syncConf(ifname: string, text: string, stateDir: string): Promise<void> {
  const file = join(stateDir, `.wireguard-${ifname}.conf`);
  await writeFile(file, text, { mode: 0o600 });
  try {
    await runTool('wg', ['syncconf', ifname, file]);
  } finally {
    await rm(file, { force: true });
  }
}

/** Creates the `WireGuard` driver. */
export function createWireGuardDriver(opts: WireGuardDriverOptions): Driver<WireGuardSpec, WireGuardObserved> {
  const name = (spec: WireGuardSpec): string => opts.interfaceName ?? spec.interface;
  const local = (spec: WireGuardSpec): WireGuardSpec => ({ ...spec, interface: name(spec) });
  return {
    kind: 'WireGuard',
    key: (spec) => `wireguard:${name(spec)}`,

    async observe(spec) {
      const link = await ipLink(name(spec));
      if (!link) return { exists: false };
      const dump = await wgDump(name(spec));
      if (!dump) return { exists: true, notWireGuard: true };
      const fwd = spec.forward ? { forwarding: await forwarding() } : {};
      return {
        exists: true,
        ...link,
        publicKey: dump.publicKey,
        listenPort: dump.listenPort,
        peers: dump.peers,
        ...fwd,
      };
    },

    diff: (spec, observed) => wireGuardDiff(local(spec), opts.key().publicKey, observed),

    async apply(spec, ctx, observed) {
      const ifname = name(spec);
      if (observed.notWireGuard) throw new Error(`${ifname} exists and is not a WireGuard interface`);
      if (!observed.exists) {
        const how = await createWireGuardLink(ifname);
        ctx.logger.info('Created WireGuard interface', { interface: ifname, implementation: how });
      }
      await syncConf(ifname, wgConfigText(spec, opts.key().privateKey), ctx.stateDir);
      for (const a of observed.addresses ?? []) {
        if (a !== spec.address) await runTool('ip', ['addr', 'del', a, 'dev', ifname]);
      }
      await runTool('ip', ['addr', 'replace', spec.address, 'dev', ifname]);
      await runTool('ip', ['link', 'set', 'dev', ifname, 'up']);
      if (spec.forward) {
        await writeFile(IP_FORWARD, '1\n');
        for (const f of NO_REDIRECTS) await writeFile(f, '0\n');
      }
    },

    async remove(spec) {
      try {
        await runTool('ip', ['link', 'del', 'dev', name(spec)]);
      } catch (e) {
        if (!/does not exist|Cannot find device/.test((e as Error).message)) throw e;
      }
    },
  };
}
