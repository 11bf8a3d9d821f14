/**
 * Creates the API client from the resolved meshconfig (see config.ts for where it is looked for). The server's
 * warnings are printed to stderr as kubectl prints them, `Warning: <text>`, each text once per run.
 */
import { createClient, type HttpClient } from '../api/client/http-client.ts';
import { loadConfig } from './config.ts';
import { withDefaultRoots } from './extra-ca.ts';

const warned = new Set<string>();

/** Prints a server warning once per process, as kubectl's default warning handler does. */
function printWarning(text: string): void {
  if (warned.has(text)) return;
  warned.add(text);
  process.stderr.write(`Warning: ${text}\n`);
}

/** The client for the control plane named by `--config FILE` or the default meshconfig. */
export function clientFor(configFlag?: string): HttpClient {
  return createClient({ ...withDefaultRoots(loadConfig({ flag: configFlag }), printWarning), onWarning: printWarning });
}
