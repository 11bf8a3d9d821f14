/**
 * Creates the API client from the resolved meshconfig (see config.ts for where it is looked for).
 */
import { createClient, type HttpClient } from '../api/client/http-client.ts';
import { loadConfig } from './config.ts';

/** The client for the control plane named by `--config FILE` or the default meshconfig. */
export function clientFor(configFlag?: string): HttpClient {
  return createClient(loadConfig({ flag: configFlag }));
}
