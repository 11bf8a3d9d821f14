/**
 * One real API server (plain HTTP on loopback, a temp store) and a client to it, shared by the tests of one
 * file: started before them, closed after them.
 */
import { after, before } from 'node:test';
import { createClient, type HttpClient } from '../api/client/http-client.ts';
import { startServer, type StartServerOptions, type TestServer } from './harness.ts';

/** The suite's server and client; read them inside tests (they exist once `before` has run). */
export interface ServerSuite {
  readonly server: TestServer;
  readonly client: HttpClient;
}

/** Registers the before/after hooks of the current test file and returns what they set up. */
export function serverSuite(opts: StartServerOptions = { insecure: true }): ServerSuite {
  let server: TestServer | undefined;
  let client: HttpClient | undefined;
  before(async () => {
    server = await startServer(opts);
    client = createClient(server.config);
  });
  after(async () => {
    client?.close();
    await server?.stop();
  });
  const started = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('serverSuite: read inside a test, after its before hook');
    return v;
  };
  return {
    get server() {
      return started(server);
    },
    get client() {
      return started(client);
    },
  };
}
