/**
 * The buffer bindings a WGSL module declares, for pipelines made with `layout: 'auto'`: WebGPU
 * derives their bind group layouts from the shader, so checked mode reads the same declarations.
 *
 * @module
 */

import type { BufferBindingKind } from './flags.js';

const declaration = /((?:@\s*[A-Za-z_]\w*\s*(?:\([^()]*\))?\s*)+)var\s*<([^>]*)>/g;
const groupAttribute = /@\s*group\s*\(\s*(\d+)\s*,?\s*\)/;
const bindingAttribute = /@\s*binding\s*\(\s*(\d+)\s*,?\s*\)/;

/**
 * The `var<storage, …>` and `var<uniform>` declarations of `code`, as group → binding → kind:
 * `var<storage, read_write>` is `'storage'`, `var<storage>` and `var<storage, read>` are
 * `'read-only-storage'`, `var<uniform>` is `'uniform'`. Declarations whose group or binding is not
 * a literal are skipped (they are not checked).
 */
export function bufferBindingsOfWgsl(code: string): Map<number, Map<number, BufferBindingKind>> {
  const groups = new Map<number, Map<number, BufferBindingKind>>();
  const source = stripComments(code);
  for (const match of source.matchAll(declaration)) {
    const attributes = match[1] ?? '';
    const group = groupAttribute.exec(attributes)?.[1];
    const binding = bindingAttribute.exec(attributes)?.[1];
    if (group === undefined || binding === undefined) continue;
    const [space, access] = (match[2] ?? '').split(',').map((s) => s.trim());
    let kind: BufferBindingKind;
    if (space === 'uniform') kind = 'uniform';
    else if (space === 'storage') kind = access === 'read_write' ? 'storage' : 'read-only-storage';
    else continue;
    const g = Number(group);
    let bindings = groups.get(g);
    if (bindings === undefined) {
      bindings = new Map();
      groups.set(g, bindings);
    }
    bindings.set(Number(binding), kind);
  }
  return groups;
}

// WGSL block comments nest; line comments run to the end of the line.
function stripComments(code: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    const next = code[i + 1];
    if (depth === 0 && c === '/' && next === '/') {
      while (i < code.length && code[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && next === '*') {
      depth++;
      i++;
    } else if (depth > 0 && c === '*' && next === '/') {
      depth--;
      i++;
      out += ' ';
    } else if (depth === 0) {
      out += c;
    }
  }
  return out;
}
