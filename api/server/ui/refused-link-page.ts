/**
 * The page a refused sign-in link shows: why (used, expired, unknown) and what to do instead. Plain HTML with
 * no script, so that it works and says so even when the page's script fails.
 */
import type { CodeRefusal } from './sign-in-links.ts';

const WHY: Record<CodeRefusal, string> = {
  used: 'This sign-in link has already been used. A link works once.',
  expired: 'This sign-in link has expired. A link works for two minutes.',
  unknown: 'This sign-in link is not known here (a control-plane restart forgets unused links).',
};

/** The HTML of the refusal. */
export function refusedLinkPage(why: CodeRefusal): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head><meta charset="utf-8"><title>Sign-in link refused — meshctl</title></head>',
    '<body><main>',
    '<h1>Sign-in link refused</h1>',
    `<p>${WHY[why]}</p>`,
    '<p>Run <code>meshctl dashboard</code> for a new link, or <a href="/ui/">sign in with the admin token</a>.</p>',
    '</main></body>',
    '</html>',
    '',
  ].join('\n');
}
