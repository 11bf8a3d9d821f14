/**
 * Finds and loads the meshconfig meshctl talks with. In order: `--config FILE`, `$MESHCONFIG`,
 * `./.meshctl/admin.meshconfig`, `./.meshctl/local/control-plane/admin.meshconfig` (what `npm start`'s local
 * mesh writes), `./.meshctl/control-plane/admin.meshconfig` (`meshctl init` as a non-root user), `~/.meshctl/config`.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { loadMeshconfig } from '../api/client/meshconfig.ts';
import type { ClientConfig } from '../api/client/types.ts';
import { CliError } from './errors.ts';

/** The home directory; `node:os` is loaded only when no `--config` nor `$MESHCONFIG` names the meshconfig. */
const homedir = (): string => (createRequire(import.meta.url)('node:os') as typeof import('node:os')).homedir();

/** Where to look, for tests: the working directory, the environment and the home directory. */
export interface ConfigLookup {
  flag?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  home?: string;
}

/** The path of the meshconfig to use (explicit choices are returned even when the file is missing). */
export function findConfigPath(opts: ConfigLookup = {}): string | undefined {
  const env = opts.env ?? process.env;
  if (opts.flag) return resolve(opts.flag);
  if (env.MESHCONFIG) return resolve(env.MESHCONFIG);
  const cwd = opts.cwd ?? process.cwd();
  const candidates = [
    join(cwd, '.meshctl', 'admin.meshconfig'),
    join(cwd, '.meshctl', 'local', 'control-plane', 'admin.meshconfig'),
    join(cwd, '.meshctl', 'control-plane', 'admin.meshconfig'),
    join(opts.home ?? homedir(), '.meshctl', 'config'),
  ];
  return candidates.find((p) => existsSync(p));
}

/** Loads the meshconfig; a missing one is a CliError that says how to get one. */
export function loadConfig(opts: ConfigLookup = {}): ClientConfig {
  const path = findConfigPath(opts);
  if (!path) {
    throw new CliError(
      'no meshconfig found: pass --config FILE or set MESHCONFIG to the admin.meshconfig a control plane wrote ' +
        '(`npm start` writes ./.meshctl/local/control-plane/admin.meshconfig; `mesh-control-plane --data-dir DIR` writes DIR/admin.meshconfig), ' +
        'or copy one to ~/.meshctl/config',
    );
  }
  try {
    return loadMeshconfig(path);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}
