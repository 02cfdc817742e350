/**
 * The generated API reference (docs/api, which turbo builds before this test): its index links
 * every package's page and the backend entry points' own pages, and no heading lost its code span
 * (an anchor named `_`, an empty entry in a page's table of contents).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const api = fileURLToPath(new URL('../../../docs/api/', import.meta.url));
const index = existsSync(join(api, 'index.html')) ? readFileSync(join(api, 'index.html'), 'utf8') : '';
const pages = existsSync(join(api, 'modules')) ? readdirSync(join(api, 'modules')).map((f) => join('modules', f)) : [];

/** The links of the index page's own text (not the navigation), as paths relative to docs/api. */
function indexLinks(): Map<string, string> {
  const body = index.slice(index.indexOf('<div class="tsd-panel tsd-typography">'));
  return new Map([...body.matchAll(/<a href="(modules\/[^"#]+)"[^>]*>([^<]+)<\/a>/g)].map((m) => [m[2] ?? '', m[1] ?? '']));
}

test('the reference was generated (pnpm run docs)', () => {
  expect(index).toContain('Pol API reference');
  expect(pages.length).toBeGreaterThan(0);
});

describe('the index', () => {
  test.each([
    '@pol/core',
    '@pol/arena',
    '@pol/verbs',
    '@pol/verbs/examples',
    '@pol/webgpu',
    '@pol/core/backend',
    '@pol/arena/backend',
  ])('links %s to its own page', (name) => {
    const target = indexLinks().get(name);
    expect(target, `no link named ${name} in docs/api/index.html`).toBeDefined();
    expect(existsSync(join(api, target ?? ''))).toBe(true);
  });

  test('gives the backend protocol a page of its own, apart from the user API', () => {
    const links = indexLinks();
    expect(links.get('@pol/core/backend')).not.toBe(links.get('@pol/core'));
    const backend = readFileSync(join(api, links.get('@pol/core/backend') ?? ''), 'utf8');
    expect(backend).toContain('makeHostArray');
  });

  test("gives the arena's storage protocol a page of its own, apart from the arena's user API", () => {
    const links = indexLinks();
    expect(links.get('@pol/arena/backend')).not.toBe(links.get('@pol/arena'));
    const backend = readFileSync(join(api, links.get('@pol/arena/backend') ?? ''), 'utf8');
    expect(backend).toContain('defineStorage');
  });

  test('tells a user to install with npm, never with another package manager', () => {
    const installs = [...index.matchAll(/(npm|pnpm|yarn|bun)(?:<[^>]*>)*\s*(?:<[^>]*>)*\s*(install|add|i)\b/g)].map((m) => m[1]);
    expect(installs.length).toBeGreaterThan(0);
    expect(new Set(installs)).toEqual(new Set(['npm']));
  });
});

describe.each(pages.map((p) => [p]))('%s', (page) => {
  test('keeps every heading whole: no anchor or table-of-contents entry lost its code span', () => {
    const html = readFileSync(join(api, page), 'utf8');
    expect(html.match(/id="_(-\d+)?"/g) ?? []).toEqual([]);
    expect(html.match(/href="#[^"]*"><span><\/span><\/a>/g) ?? []).toEqual([]);
  });
});
