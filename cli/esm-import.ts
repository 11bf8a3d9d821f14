/**
 * `import()` of an ES-only package (chokidar 5) from meshctl's code. The shipped bundle runs from V8's code cache in
 * a `vm.Script` (launcher.ts), where Node 20 has no loader for `import()`; so hack/build.mjs turns the bundle's
 * dynamic imports into `require()`, and builds this file apart (dist/meshctl-esm-import.js), loaded by Node's own
 * CommonJS loader, whose `import()` works. Under tsx it is a plain `import()`.
 */

/** Imports the ES module `specifier` (resolved from this file, i.e. from the project's node_modules). */
export function importEsm<T>(specifier: string): Promise<T> {
  return import(specifier) as Promise<T>;
}
