// Internal: a kernel's parameter list, read from its source text, for messages that name the
// parameter a call got wrong ("its input 'x'") and for the refusal that needs more than
// `kernel.length`: how many parameters a kernel has past a default, and whether it takes a rest
// parameter (or reads `arguments`).
//
// Read once per verb, and only on a refused or failed call (never on the hot path). When the
// source cannot be read with confidence (native or bound functions, a syntax this small reader does
// not follow), the answer is `undefined` and callers fall back to `kernel.length` and positions.

/** One parameter: its name (`undefined` when destructured), and whether it is a rest parameter or has a default. */
export interface Parameter {
  readonly name: string | undefined;
  readonly rest: boolean;
  readonly defaulted: boolean;
}

/** A function's parameters, and whether it takes any number of arguments (a rest parameter, or `arguments` in its body). */
export interface Signature {
  readonly parameters: readonly Parameter[];
  readonly variadic: boolean;
}

/** The signature of `f`, or `undefined` when its source cannot be read with confidence. */
export function signatureOf(f: (...args: never[]) => unknown): Signature | undefined {
  let source: string;
  try {
    source = Function.prototype.toString.call(f);
  } catch {
    return undefined;
  }
  if (/\{\s*\[native code\]\s*\}\s*$/.test(source)) return undefined;
  const text = blank(source);
  if (text === undefined) return undefined;
  const list = parameterList(text);
  const parameters = list === undefined ? undefined : splitParameters(list);
  if (parameters === undefined) return undefined;
  return { parameters, variadic: parameters.some((p) => p.rest) || /\barguments\b/.test(text) };
}

const identifier = /^[A-Za-z_$][\w$]*$/;

/**
 * `source` with every comment, and the inside of every string and template literal, turned into
 * spaces (the quotes kept), so that brackets, commas and `=` can be counted plainly; `undefined`
 * when a string or comment does not end.
 */
function blank(source: string): string | undefined {
  const out = source.split('');
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    const quoted = c === "'" || c === '"' || c === '`';
    let end: number;
    if (quoted) end = stringEnd(source, i);
    else if (c === '/' && source[i + 1] === '/') end = lineEnd(source, i);
    else if (c === '/' && source[i + 1] === '*') end = commentEnd(source, i);
    else {
      i++;
      continue;
    }
    if (end < 0) return undefined;
    // A string keeps its quotes (it is still a value); a comment goes entirely.
    for (let j = quoted ? i + 1 : i; j < (quoted ? end - 1 : end); j++) out[j] = ' ';
    i = end;
  }
  return out.join('');
}

function lineEnd(s: string, i: number): number {
  const end = s.indexOf('\n', i);
  return end < 0 ? s.length : end;
}

function commentEnd(s: string, i: number): number {
  const end = s.indexOf('*/', i + 2);
  return end < 0 ? -1 : end + 2;
}

// The index after the string or template literal starting at `i` (substitutions included), or -1.
function stringEnd(s: string, i: number): number {
  const quote = s[i];
  i++;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') i += 2;
    else if (c === quote) return i + 1;
    else if (quote === '`' && c === '$' && s[i + 1] === '{') {
      let depth = 1;
      i += 2;
      while (i < s.length && depth > 0) {
        const d = s[i];
        if (d === "'" || d === '"' || d === '`') {
          i = stringEnd(s, i);
          if (i < 0) return -1;
          continue;
        }
        if (d === '{') depth++;
        else if (d === '}') depth--;
        i++;
      }
    } else i++;
  }
  return -1;
}

// The text between the parentheses of the parameter list (or the bare arrow parameter).
function parameterList(text: string): string | undefined {
  const bare = /^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(text);
  if (bare !== null) return bare[1];
  const open = text.indexOf('(');
  if (open < 0) return undefined;
  let depth = 0;
  for (let i = open + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return c === ')' ? text.slice(open + 1, i) : undefined;
      depth--;
    }
  }
  return undefined;
}

// Split the (blanked) list at its top-level commas and read each parameter.
function splitParameters(list: string): readonly Parameter[] | undefined {
  const pieces: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      pieces.push(list.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) return undefined;
  if (list.slice(start).trim() !== '') pieces.push(list.slice(start));
  const parameters: Parameter[] = [];
  for (const piece of pieces) {
    const text = piece.trim();
    if (text === '') return undefined;
    const rest = text.startsWith('...');
    const body = rest ? text.slice(3).trim() : text;
    const eq = topLevelEquals(body);
    const target = (eq < 0 ? body : body.slice(0, eq)).trim();
    const name = identifier.test(target) ? target : undefined;
    if (name === undefined && !(target.startsWith('{') || target.startsWith('['))) return undefined;
    parameters.push({ name, rest, defaulted: eq >= 0 });
  }
  return parameters;
}

// The index of the `=` that starts a default value (not `=>`, `==`, or one inside brackets), or -1.
function topLevelEquals(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === '=' && depth === 0 && text[i + 1] !== '>' && text[i + 1] !== '=' && text[i - 1] !== '=') return i;
  }
  return -1;
}
