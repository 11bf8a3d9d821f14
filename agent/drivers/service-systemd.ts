/**
 * The `Service` driver for `driver: systemd`: writes `/etc/systemd/system/meshctl-<id>.service` (under
 * the root) atomically and drives `systemctl`: daemon-reload and `enable --now` for a new unit,
 * `restart` when the unit changed, `disable --now` and unlink on removal; observes with `is-active`.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, unlink } from 'node:fs/promises';
import { dirname, posix } from 'node:path';
import type { ServiceSpec } from '../../api/v1alpha1/generated/host-resource.ts';
import type { Change, Driver, Observed } from '../engine/types.ts';
import { fsyncDir, writeFileAtomic } from '../../api/meta/atomic-file.ts';
import { assertResolvesInsideRoot, resolveDirUnderRoot, resolveUnderRoot } from './resolve-under-root.ts';
import { checkServiceSpec } from './service-process.ts';
import { UNIT_MARKER, renderUnit, unitName } from './systemd-unit.ts';
import { errnoCode } from '../../api/meta/errno.ts';

/** Options of the systemd service driver. */
export interface SystemdDriverOptions {
  /** The `systemctl` binary. Default `systemctl` (from PATH). */
  systemctl?: string;
  /** Where units are written, as a declared (root-relative) path. Default `/etc/systemd/system`. */
  unitDir?: string;
}

/** What the systemd driver sees: the unit file's text and `systemctl is-active`. */
export interface SystemdObserved extends Observed {
  unit?: string;
  content?: string;
  active?: string;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') reject(new Error(`could not run ${bin}: ${err.message}`));
      else resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
}

/** Creates the systemd service driver. */
export function createSystemdServiceDriver(opts: SystemdDriverOptions = {}): Driver<ServiceSpec, SystemdObserved> {
  const bin = opts.systemctl ?? 'systemctl';
  const unitDir = opts.unitDir ?? '/etc/systemd/system';
  /** The unit file's path; it, a symlink as its last component included, must resolve inside the root. */
  const unitPath = async (root: string, unit: string): Promise<string> => {
    const path = await resolveUnderRoot(root, posix.join(unitDir, unit));
    assertResolvesInsideRoot(root, path, posix.join(unitDir, unit));
    return path;
  };
  const systemctl = async (...args: string[]): Promise<void> => {
    const r = await run(bin, args);
    if (r.code !== 0)
      throw new Error(`systemctl ${args.join(' ')} failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  };

  return {
    kind: 'Service',
    key: (_spec, id) => `service:${id}`,

    async observe(spec, ctx) {
      checkServiceSpec(spec);
      const unit = unitName(ctx.id);
      const content = await readFile(await unitPath(ctx.root, unit), 'utf8').catch((e: unknown) => {
        if (errnoCode(e) === 'ENOENT') return undefined;
        throw e;
      });
      if (content === undefined) return { exists: false, unit };
      const active = (await run(bin, ['is-active', unit])).stdout.trim();
      return { exists: true, unit, content, active };
    },

    diff(spec, observed) {
      const unit = observed.unit ?? '';
      if (!observed.exists) return [{ field: 'unit', message: `unit ${unit} is absent` }];
      const changes: Change[] = [];
      if (observed.content !== renderUnit(spec, unit))
        changes.push({ field: 'unit', message: `unit ${unit} differs from the spec` });
      if (observed.active !== 'active')
        changes.push({ field: 'active', message: `unit ${unit} is ${observed.active || 'unknown'}` });
      return changes;
    },

    async apply(spec, ctx, observed) {
      checkServiceSpec(spec);
      const unit = unitName(ctx.id);
      const text = renderUnit(spec, unit);
      if (spec.workingDirectory !== undefined) await resolveDirUnderRoot(ctx.root, spec.workingDirectory);
      if (observed.exists && observed.content === text) {
        if (observed.active !== 'active') await systemctl('enable', '--now', unit);
        return;
      }
      const path = await unitPath(ctx.root, unit);
      await mkdir(dirname(path), { recursive: true });
      await writeFileAtomic(path, text, { mode: 0o644 });
      await systemctl('daemon-reload');
      if (observed.exists) await systemctl('restart', unit);
      else await systemctl('enable', '--now', unit);
    },

    async remove(_spec, ctx) {
      const unit = unitName(ctx.id);
      const path = await unitPath(ctx.root, unit);
      try {
        await readFile(path);
      } catch (e) {
        if (errnoCode(e) === 'ENOENT') return;
        throw e;
      }
      await systemctl('disable', '--now', unit);
      await unlink(path);
      await fsyncDir(dirname(path));
      await systemctl('daemon-reload');
    },

    owns: (_spec, observed) =>
      observed.exists && typeof observed.content === 'string' && observed.content.startsWith(UNIT_MARKER),
  };
}
