// Builds one status page (web/<name>/main.ts and the CSS it imports) with esbuild for the browser: one script and
// one stylesheet, nothing fetched from elsewhere at run time. hack/build.mjs writes them to dist/web/ for the
// shipped binaries; api/web/assets.ts calls this in memory when the programs run from source (tsx), so a test
// always serves the page as the source says.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** esbuild for web/<name>/main.ts → <name>.js and <name>.css; `outdir` undefined builds in memory. */
export async function buildWebPage(name, outdir) {
  const r = await build({
    absWorkingDir: ROOT,
    entryPoints: { [name]: `web/${name}/main.ts` },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: ['chrome110', 'firefox110', 'safari16'],
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    outdir: outdir ?? 'dist/web',
    write: outdir !== undefined,
  });
  if (outdir !== undefined) return undefined;
  const pick = (ext) =>
    new TextDecoder().decode(r.outputFiles.find((f) => f.path.endsWith(ext))?.contents ?? new Uint8Array());
  return { js: pick('.js'), css: pick('.css') };
}
