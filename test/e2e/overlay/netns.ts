/**
 * Network namespaces for the overlay e2e test: hosts on an underlay that the test builds and always removes
 * (../shared/recipes/wireguard-netns.md §8). Every name carries the run's prefix `mwg<pid in base 36>`, so
 * a later run finds what a crashed run left (its pid is gone) and removes it first: the processes in its
 * namespaces (wireguard-go, agents, pings) are stopped before the namespaces are deleted (`ip netns del` does
 * not stop wireguard-go), then its stale wireguard-go sockets go. WireGuard interface names carry the prefix
 * too: wireguard-go's sockets under /run/wireguard are shared by every namespace of the machine.
 *
 * Underlay: only 198.18.0.0/15, a router namespace with one bridge per site, no default route anywhere and
 * nothing in the root namespace, so no packet leaves. Overlay addresses (100.64.0.0/10) are the mesh's.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../../../agent/testing.ts';
import { isRunning, pidsWithTag } from '../mesh-helpers.ts';

const run = promisify(execFile);

/** The family prefix of every name this test creates; the run's prefix adds its pid. */
const FAMILY = 'mwg';
const SOCKETS = '/run/wireguard';

/** The start of the name of a run's temp dir (followed by the run's prefix): a crashed run's is removed too. */
export const TEMP_DIR_PREFIX = 'meshctl-overlay-e2e-';

/** This run's prefix (≤ 8 characters: interface names `<prefix>_<host>` stay ≤ 15). */
export const PREFIX = `${FAMILY}${process.pid.toString(36)}`;

/** Why this machine cannot run the test, or undefined when it can. */
export async function missingCapability(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'it needs root (network namespaces, TUN devices)';
  if (!existsSync('/dev/net/tun')) return 'it needs /dev/net/tun (wireguard-go creates TUN devices)';
  for (const tool of [
    ['ip', '-V'],
    ['wg', '--version'],
    ['wireguard-go', '--version'],
    ['ping', '-V'],
  ]) {
    try {
      await run(tool[0], tool.slice(1));
    } catch {
      return `it needs ${tool[0]} (apt-get install --no-install-recommends wireguard-tools wireguard-go iproute2 iputils-ping)`;
    }
  }
  return undefined;
}

/** Runs `ip …`. */
export async function ip(...args: string[]): Promise<string> {
  return (await run('ip', args)).stdout;
}

/** Runs a command inside namespace `ns`. */
export async function inNs(ns: string, cmd: string[], timeoutMs = 10_000): Promise<string> {
  return (await run('ip', ['netns', 'exec', ns, ...cmd], { timeout: timeoutMs })).stdout;
}

async function namespaces(): Promise<string[]> {
  return (await ip('netns', 'list'))
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter((n) => n.startsWith(FAMILY));
}

/** The pid of the run that made `name` (`mwg<pid base 36>-host` or `mwg<pid base 36>_x`), or undefined. */
function ownerPid(name: string): number | undefined {
  const id = /^mwg([0-9a-z]+)[-_]/.exec(name)?.[1];
  return id === undefined ? undefined : parseInt(id, 36);
}

/** Stops every process in `ns` (SIGTERM, then SIGKILL after 3 s) and deletes it. */
export async function removeNamespace(ns: string): Promise<void> {
  const pids = (await ip('netns', 'pids', ns).catch(() => '')).split('\n').filter(Boolean).map(Number);
  for (const pid of pids) process.kill(pid, 'SIGTERM');
  await waitFor(() => pids.every((p) => !isRunning(p)), 3_000, `processes of ${ns} to stop`).catch(() => {
    for (const pid of pids.filter(isRunning)) process.kill(pid, 'SIGKILL');
  });
  await waitFor(() => pids.every((p) => !isRunning(p)), 10_000, `processes of ${ns} to be killed`);
  await ip('netns', 'del', ns).catch(() => {});
}

/**
 * Removes what this run made (`leftovers`: false, at the end) or what crashed earlier runs left (their pid is
 * no longer running; a run in progress is left alone): namespaces with their processes, then wireguard-go sockets, and
 * a crashed run's temp dir.
 */
export async function cleanup(opts: { leftovers: boolean }): Promise<string[]> {
  const owned = (name: string): boolean => {
    const pid = ownerPid(name);
    if (pid === undefined) return false;
    return opts.leftovers ? pid !== process.pid && !isRunning(pid) : pid === process.pid;
  };
  const gone = (await namespaces()).filter(owned);
  for (const ns of gone) await removeNamespace(ns);
  const sockets = existsSync(SOCKETS) ? readdirSync(SOCKETS).filter((f) => f.startsWith(FAMILY)) : [];
  for (const s of sockets) if (owned(s.replace(/\.sock$/, ''))) rmSync(`${SOCKETS}/${s}`, { force: true });
  if (opts.leftovers) {
    const dirs = readdirSync(tmpdir()).filter((d) => d.startsWith(TEMP_DIR_PREFIX));
    for (const d of dirs.filter((x) => owned(x.slice(TEMP_DIR_PREFIX.length)))) await removeRunDir(join(tmpdir(), d));
  }
  return gone;
}

/** Kills what a crashed run left running outside its namespaces (its control plane, named by its data dir), then removes the dir. */
async function removeRunDir(dir: string): Promise<void> {
  const pids = pidsWithTag(dir);
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  await waitFor(() => pids.every((p) => !isRunning(p)), 10_000, `the processes of ${dir} to be gone`);
  rmSync(dir, { recursive: true, force: true });
}

/** One host of the underlay: its namespace, site, underlay address and WireGuard interface name. */
export interface Host {
  name: string;
  ns: string;
  site: string;
  underlay: string;
  ifname: string;
}

/** The sites' subnets: 198.18.<n>.0/24, router .1. */
const SITE_NET: Record<string, number> = { dc: 0, site1: 1, site2: 2 };

/** Builds the router namespace with one bridge per site and one namespace per host (`hosts`: name → site, host byte). */
export async function buildUnderlay(hosts: Array<{ name: string; site: string; byte: number }>): Promise<Host[]> {
  const rtr = `${PREFIX}-rtr`;
  await ip('netns', 'add', rtr);
  await ip('-n', rtr, 'link', 'set', 'lo', 'up');
  await inNs(rtr, ['sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward']);
  for (const [site, n] of Object.entries(SITE_NET)) {
    await ip('-n', rtr, 'link', 'add', `br-${site}`, 'type', 'bridge');
    await ip('-n', rtr, 'addr', 'add', `198.18.${n}.1/24`, 'dev', `br-${site}`);
    await ip('-n', rtr, 'link', 'set', `br-${site}`, 'up');
  }
  const out: Host[] = [];
  for (const h of hosts) {
    const ns = `${PREFIX}-${h.name}`;
    const underlay = `198.18.${SITE_NET[h.site]}.${h.byte}`;
    await ip('netns', 'add', ns);
    await ip('-n', ns, 'link', 'set', 'lo', 'up');
    await ip('-n', rtr, 'link', 'add', `p-${h.name}`, 'type', 'veth', 'peer', 'name', 'u0', 'netns', ns);
    await ip('-n', rtr, 'link', 'set', `p-${h.name}`, 'master', `br-${h.site}`, 'up');
    await ip('-n', ns, 'addr', 'add', `${underlay}/24`, 'dev', 'u0');
    await ip('-n', ns, 'link', 'set', 'u0', 'up');
    await ip('-n', ns, 'route', 'add', '198.18.0.0/15', 'via', `198.18.${SITE_NET[h.site]}.1`);
    out.push({ ...h, ns, underlay, ifname: `${PREFIX}_${h.name}`.slice(0, 15) });
  }
  return out;
}

/** One ping from `ns` to `address`: the reply's TTL and the recorded route (`-R`), or undefined when lost. */
export async function ping(
  ns: string,
  address: string,
  record = false,
): Promise<{ ttl: number; route: string[] } | undefined> {
  try {
    const out = await inNs(ns, ['ping', '-n', '-c1', '-W1', ...(record ? ['-R'] : []), address], 5_000);
    const ttl = Number(/ttl=(\d+)/.exec(out)?.[1]);
    const rr = /RR:([\s\S]*?)\n\n/.exec(out)?.[1] ?? '';
    return { ttl, route: rr.split(/\s+/).filter(Boolean) };
  } catch {
    return undefined;
  }
}

/** The pids of wireguard-go serving interface `ifname` (by /proc: comm and argv). */
export function wireguardGoPids(ifname: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((pid) => {
      try {
        const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return comm === 'wireguard-go' && argv.includes(ifname) && isRunning(pid);
      } catch {
        return false;
      }
    });
}
