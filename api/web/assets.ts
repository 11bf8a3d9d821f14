/**
 * The status pages' assets, for the program that serves one (the control plane's page, each agent's node page).
 * From the shipped bundles they are dist/web/<name>.js and .css, built by hack/build.mjs; from source (tsx, the
 * tests) they are built in memory by hack/web-build.mjs at first use, so what is served is what the source says.
 * The HTML shell is written here: a page is its script and stylesheet, with no request to anywhere else.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One page's built script and stylesheet. */
export interface WebAssets {
  js: string;
  css: string;
}

const cache = new Map<string, Promise<WebAssets>>();
const fromSource = import.meta.url.endsWith('.ts');

/** The page `name` (a folder under web/ with main.ts), loaded or built once per process. */
export function webAssets(name: string): Promise<WebAssets> {
  let p = cache.get(name);
  if (!p) {
    p = fromSource ? buildFromSource(name) : readBuilt(name);
    p.catch(() => cache.delete(name));
    cache.set(name, p);
  }
  return p;
}

async function buildFromSource(name: string): Promise<WebAssets> {
  const hack: { buildWebPage(name: string): Promise<WebAssets> } = await import(
    new URL('../../hack/web-build.mjs', import.meta.url).href
  );
  return hack.buildWebPage(name);
}

async function readBuilt(name: string): Promise<WebAssets> {
  const dir = fileURLToPath(new URL('./web/', import.meta.url));
  const js = `${dir}${name}.js`;
  if (!existsSync(js)) throw new Error(`the ${name} page is not built: ${js} is missing (run npm run build)`);
  const css = `${dir}${name}.css`;
  return { js: readFileSync(js, 'utf8'), css: existsSync(css) ? readFileSync(css, 'utf8') : '' };
}

/** The HTML that loads a page: its stylesheet and script from `base` (e.g. `/ui/`), and a no-script notice. */
export function pageShell(opts: { title: string; base: string; name: string }): string {
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(opts.title)}</title>`,
    `<link rel="stylesheet" href="${esc(opts.base)}${esc(opts.name)}.css">`,
    `<script defer src="${esc(opts.base)}${esc(opts.name)}.js"></script>`,
    '</head>',
    '<body>',
    `<noscript><p>This page needs JavaScript. The same facts are in the terminal: see the README.</p></noscript>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** Headers for every page response: nothing may load from outside, no framing, no caching of live state. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};
