/**
 * `meshctl dashboard [--no-open]`: the control plane's status page. Asks the control plane for a one-time sign-in
 * link (api/client/sign-in-link.ts; good once, for two minutes), prints it, and opens it in a browser when this
 * machine has a display (`xdg-open`, or `open` on macOS) unless `--no-open`. The link signs the browser in
 * (a session cookie for reading) and lands on the page without the code.
 */
import { spawn } from 'node:child_process';
import { createSignInLink } from '../api/client/sign-in-link.ts';
import type { Command, CommandContext } from './command.ts';
import { loadConfig } from './config.ts';
import { EXIT_OK } from './errors.ts';

/** The `dashboard` command. */
export const command: Command = {
  usage: 'dashboard [--no-open]',
  description:
    "Open the control plane's status page: prints a one-time sign-in link (good once, for two minutes) and opens it in a browser when there is a display. The page shows the nodes, assignments, certificates, the recovery clock and what is stopped, live. It uses the mesh's own CA: the browser asks you to accept its certificate unless the CA is trusted.",
  examples: ['meshctl dashboard', 'meshctl dashboard --no-open   # print the link only (e.g. over ssh)'],
  flags: [{ name: 'no-open', type: 'boolean', help: 'print the link, do not start a browser' }],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  const link = await createSignInLink(loadConfig({ flag: ctx.args.str('config') }));
  ctx.out(`The status page: ${link.page}\n`);
  ctx.out(`One-time sign-in link (works once, until ${link.expires}):\n  ${link.url}\n`);
  const opener = browserOpener(ctx.args.bool('no-open'));
  if (typeof opener === 'string') {
    ctx.err(`Not opened in a browser: ${opener}. Open the link above yourself.\n`);
    return EXIT_OK;
  }
  const error = await open(opener, link.url);
  if (error) ctx.err(`Could not open a browser with ${opener.cmd} (${error}). Open the link above yourself.\n`);
  else ctx.err(`Opened it with ${opener.cmd}.\n`);
  return EXIT_OK;
}

/** The program that opens a URL here, or why none is used. */
function browserOpener(noOpen: boolean): string | { cmd: string } {
  if (noOpen) return '--no-open';
  if (process.platform === 'darwin') return { cmd: 'open' };
  if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return 'no display (DISPLAY and WAYLAND_DISPLAY are unset)';
  return { cmd: 'xdg-open' };
}

/**
 * Starts `opener` on `url` (detached); resolves with an error text when it could not start or failed within
 * a few seconds, else undefined (xdg-open exits once it has handed the URL over; a browser started directly may not).
 */
function open(opener: { cmd: string }, url: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(opener.cmd, [url], { stdio: 'ignore', detached: true });
    const timer = setTimeout(() => resolve(undefined), 5000);
    const done = (why: string | undefined): void => {
      clearTimeout(timer);
      resolve(why);
    };
    child.once('error', (e) => done(e.message));
    child.once('exit', (code) => done(code === 0 ? undefined : `it exited with ${code}`));
    child.unref();
  });
}
