/**
 * Renders the systemd unit of a `Service` with driver `systemd`: the unit name derived from the
 * resource id (escaped like systemd-escape), and ExecStart/Environment/WorkingDirectory quoted by the
 * rules of systemd.syntax(7) and systemd.service(5) (C-style escapes in double quotes, `%%`, `$$`).
 */
import type { RestartPolicy, ServiceSpec } from '../../api/v1alpha1/generated/host-resource.ts';

/** The first line of every unit the agent writes; a unit carrying it was written by meshctl. */
export const UNIT_MARKER = '# Managed by meshctl';

/** The unit name of a service resource: `meshctl-<escaped id>.service`. */
export function unitName(id: string): string {
  const escaped = Array.from(Buffer.from(id, 'utf8'), (b, i) => {
    const c = String.fromCharCode(b);
    if (c === '/') return '-';
    if (/[A-Za-z0-9:_]/.test(c) || (c === '.' && i > 0)) return c;
    return `\\x${b.toString(16).padStart(2, '0')}`;
  }).join('');
  return `meshctl-${escaped}.service`;
}

function escapeC(s: string): string {
  return s
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/\n/g, '\\n')
    .replace(/\t/g, '\\t')
    .replace(/\r/g, '\\r');
}

/** Quotes one ExecStart argument (specifiers and variables escaped; quoted when needed). */
export function quoteExecArg(arg: string): string {
  const s = arg.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return s === '' || /[\s"'\\;]/.test(s) ? `"${escapeC(s)}"` : s;
}

/** Quotes one `Environment=` assignment. */
export function quoteEnv(name: string, value: string): string {
  return `"${escapeC(`${name}=${value}`.replace(/%/g, '%%'))}"`;
}

const RESTART: Record<RestartPolicy, string> = { always: 'always', 'on-failure': 'on-failure', never: 'no' };

/** Renders the unit file text for `spec` under the unit name `unit`. */
export function renderUnit(spec: ServiceSpec, unit: string): string {
  const [exe] = spec.command;
  if (exe !== undefined && /^[@\-:+!|]/.test(exe))
    throw new Error(`Service command ${JSON.stringify(exe)} must not start with a systemd ExecStart prefix character`);
  const wd = spec.workingDirectory;
  if (wd !== undefined && /[\n\r]/.test(wd)) throw new Error('Service workingDirectory must not contain line breaks');
  const env = Object.entries(spec.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const lines = [
    `${UNIT_MARKER} (${unit}); local changes are overwritten.`,
    '[Unit]',
    `Description=meshctl service ${unit.replace(/%/g, '%%')}`,
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${spec.command.map(quoteExecArg).join(' ')}`,
    ...(env.length ? [`Environment=${env.map(([k, v]) => quoteEnv(k, v)).join(' ')}`] : []),
    ...(wd !== undefined ? [`WorkingDirectory=${wd.replace(/%/g, '%%')}`] : []),
    `Restart=${RESTART[spec.restart ?? 'always']}`,
    'RestartSec=1s',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
  ];
  return lines.join('\n') + '\n';
}
