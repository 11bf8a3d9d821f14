/**
 * The pages' one DOM helper: `h('td', { class: 'ok' }, 'Reachable')` builds an element. Text is always set as
 * text (never parsed as HTML), so a name or message from the API cannot inject markup.
 */

/** Attribute values; `false`/`undefined` leave the attribute out, `true` sets it empty. */
export type Attrs = Record<string, string | number | boolean | undefined>;
/** What an element may contain: elements, text, or nothing. */
export type Child = Node | string | number | null | undefined | false;

/** Creates `<tag>` with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replaces everything inside `el` with `children`. */
export function replaceChildren(el: Element, ...children: (Child | Child[])[]): void {
  el.replaceChildren(
    ...children
      .flat()
      .filter((c): c is Node | string | number => c !== null && c !== undefined && c !== false)
      .map((c) => (c instanceof Node ? c : String(c))),
  );
}
