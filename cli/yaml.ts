/**
 * Loads the YAML library when a command needs it, from node_modules at run time rather than from the
 * bundle: it is two thirds of the bundle's size, and compiling it on every start would cost `meshctl get`
 * several milliseconds even when no YAML is read or printed (the meshconfig loader does the same).
 */
import { createRequire } from 'node:module';

type YamlModule = typeof import('yaml');
let cached: YamlModule | undefined;

/** The `yaml` package. */
export function yaml(): YamlModule {
  return (cached ??= createRequire(import.meta.url)('yaml') as YamlModule);
}
