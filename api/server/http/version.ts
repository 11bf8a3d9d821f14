/**
 * The versions the server reports on `/version`: the Kubernetes API level it imitates (so kubectl's version
 * skew checks stay quiet) and meshctl's own version from package.json.
 */
import pkg from '../../../package.json' with { type: 'json' };

/** meshctl's own version (package.json). */
export const MESHCTL_VERSION: string = pkg.version;

/** The Kubernetes minor version whose API conventions the server follows (kubectl 1.32 is tested). */
export const KUBE_MAJOR = '1';
export const KUBE_MINOR = '32';

/** The `/version` document (a Kubernetes `version.Info` plus `meshctlVersion`). */
export function versionInfo(): Record<string, string> {
  return {
    major: KUBE_MAJOR,
    minor: KUBE_MINOR,
    gitVersion: `v${KUBE_MAJOR}.${KUBE_MINOR}.0-meshctl.${MESHCTL_VERSION}`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '',
    goVersion: `node${process.versions.node}`,
    compiler: 'node',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
    meshctlVersion: MESHCTL_VERSION,
  };
}
