// Internal: a kernel's parameter list, read from its source text, for messages that name the
// parameter a call got wrong ("its input 'x'") and for the one refusal that needs more than
// `kernel.length`: whether a kernel takes a rest parameter or has parameters after a default.
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
  const list = parameterText(source);
  const parameters = list === undefined ? undefined : splitParameters(list);
  if (parameters === undefined) return undefined;
  return { parameters, variadic: parameters.some((p) => p.rest) || /\barguments\b/.test(source) };
}

const identifier = /^[A-Za-z_$][\w$]*$/;

// The text between the parentheses of the parameter list (or the single bare arrow parameter).
function parameterText(source: string): string | undefined {
  if (/\{\s*\[native code\]\s*\}\s*$/.test(source)) return undefined;
  let i = skipSpace(source, 0);
  // `async x => ...`, `x => ...`: a bare arrow parameter.
  const bare = /^(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(source.slice(i));
  if (bare !== null) return bare[1];
  const open = source.indexOf('(', i);
  if (open < 0) return undefined;
  i = open + 1;
  const start = i;
  let depth = 0;
  while (i < source.length) {
    const c = source[i] as string;
    if (c === "'" || c === '"' || c === '`') {
      i = skipString(source, i);
      if (i < 0) return undefined;
      continue;
    }
    if (c === '/' && (source[i + 1] === '/' || source[i + 1] === '*')) {
      i = skipComment(source, i);
      if (i < 0) return undefined;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return c === ')' ? source.slice(start, i) : undefined;
      depth--;
    }
    i++;
  }
  return undefined;
}

function skipSpace(s: string, i: number): number {
  while (i < s.length && /\s/.test(s[i] as string)) i++;
  return i;
}

// The index after the string or template literal starting at `i`, or -1 if it does not end.
function skipString(s: string, i: number): number {
  const quote = s[i];
  i++;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === quote) return i + 1;
    if (quote === '`' && c === '$' && s[i + 1] === '{') {
      // A template substitution: skip to its closing brace, strings inside included.
      let depth = 1;
      i += 2;
      while (i < s.length && depth > 0) {
        const d = s[i];
        if (d === "'" || d === '"' || d === '`') {
          i = skipString(s, i);
          if (i < 0) return -1;
          continue;
        }
        if (d === '{') depth++;
        else if (d === '}') depth--;
        i++;
      }
      continue;
    }
    i++;
  }
  return -1;
}

function skipComment(s: string, i: number): number {
  if (s[i + 1] === '/') {
    const end = s.indexOf('\n', i);
    return end < 0 ? s.length : end + 1;
  }
  const end = s.indexOf('*/', i + 2);
  return end < 0 ? -1 : end + 2;
}

// Split the list at its top-level commas and read each parameter.
function splitParameters(list: string): readonly Parameter[] | undefined {
  const pieces: string[] = [];
  let depth = 0;
  let start = 0;
  let i = 0;
  while (i < list.length) {
    const c = list[i] as string;
    if (c === "'" || c === '"' || c === '`') {
      i = skipString(list, i);
      if (i < 0) return undefined;
      continue;
    }
    if (c === '/' && (list[i + 1] === '/' || list[i + 1] === '*')) {
      const end = skipComment(list, i);
      if (end < 0) return undefined;
      list = list.slice(0, i) + ' '.repeat(end - i) + list.slice(end);
      i = end;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      pieces.push(list.slice(start, i));
      start = i + 1;
    }
    i++;
  }
  if (depth !== 0) return undefined;
  const last = list.slice(start);
  if (last.trim() !== '') pieces.push(last);
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
