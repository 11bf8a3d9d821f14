/**
 * Puts the sections of a partial run (`npm run bench -- scale`) into an existing RESULTS.md: a section replaces the
 * one with the same `## <number>.` heading (up to the next `## ` heading), or is appended; each is stamped with
 * when it was measured, as the rest of the file is from another run.
 */

/** `doc` with each of `sections` in place of its namesake; `note` (e.g. the load average) goes under each heading. */
export function mergeSections(doc: string, sections: string[], note: string): string {
  let out = doc.trimEnd();
  for (const section of sections) {
    const heading = /^## (\d+)\./.exec(section)?.[1];
    const [first, ...rest] = section.split('\n');
    const stamped = [
      first,
      '',
      `_Measured on its own by a later partial run (${new Date().toISOString()}; ${note})._`,
      ...rest,
    ].join('\n');
    const start = heading === undefined ? -1 : out.search(new RegExp(`^## ${heading}\\.`, 'm'));
    if (start < 0) {
      out = `${out}\n\n${stamped}`;
      continue;
    }
    const next = out.slice(start + 3).search(/^## /m);
    const end = next < 0 ? out.length : start + 3 + next;
    out = `${out.slice(0, start)}${stamped}\n\n${out.slice(end)}`.trimEnd();
  }
  return `${out}\n`;
}
