/**
 * How deep a body nests, measured before it is parsed. Both parsers this server uses recurse once per level
 * when they build values (the YAML composer does), so a body a few thousand levels deep overflows the stack —
 * and once the YAML parser is warm, such a body has aborted the whole process (`RegExpCompiler Allocation
 * failed`) — whatever is checked after parsing. JSON is checked the same way, so both formats answer alike.
 *
 * JSON is measured by a linear scan of brackets outside strings. YAML's nesting also comes from indentation,
 * compact sequences (`- - x`), flow collections and keys, which no bracket count sees exactly; so its depth is
 * read from the `yaml` package's concrete syntax tree, whose lexer and parser work with an explicit stack (no
 * recursion), walked here with an explicit stack too.
 */
import { Parser, type CST } from 'yaml';

/** Whether a JSON text nests objects and arrays deeper than `limit` (strings are skipped, escapes honoured). */
export function jsonDeeperThan(text: string, limit: number): boolean {
  if (openingsAtMost(text, limit)) return false; // the usual body: too few brackets to nest that deep
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** Whether `text` holds at most `limit` of `[` and `{` in all (counted by the native indexOf, not char by char). */
function openingsAtMost(text: string, limit: number): boolean {
  let n = 0;
  for (const c of ['{', '[']) {
    for (let i = text.indexOf(c); i >= 0; i = text.indexOf(c, i + 1)) if (++n > limit) return false;
  }
  return true;
}

/** Whether a YAML text nests collections deeper than `limit`, from its syntax tree (no value is built). */
export function yamlDeeperThan(text: string, limit: number): boolean {
  for (const doc of new Parser().parse(text)) {
    const stack: [CST.Token | undefined, number][] = [[doc, 0]];
    while (stack.length) {
      const [token, depth] = stack.pop()!;
      if (!token) continue;
      if (token.type === 'document') stack.push([token.value, depth]);
      else if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
        if (depth + 1 > limit) return true;
        for (const item of token.items) {
          if ('key' in item) stack.push([item.key ?? undefined, depth + 1]);
          stack.push([item.value, depth + 1]);
        }
      }
    }
  }
  return false;
}
