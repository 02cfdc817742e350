/// <reference types="node" />
// Claims in a browser: module workers of a cross-origin-isolated page (COOP and COEP headers from
// this test's own server on 127.0.0.1) race for regions of a shared slab in headless Chromium,
// running the built package as a page would load it.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const here = fileURLToPath(new URL('.', import.meta.url));
const pages = join(here, 'test-support', 'browser');
// Where the page finds each package's build: its bare imports are rewritten to these.
const packages: Record<string, string> = {
  arena: join(here, '..', 'dist'),
  core: join(here, '..', '..', 'core', 'dist'),
};

let server: Server | undefined;
let browser: Browser | undefined;

// Serve the page, its worker and the packages' builds, cross-origin isolated. A module's bare
// '@pol/core' and '@pol/core/backend' imports become paths (a worker has no import map).
function serve(): Promise<string> {
  server = createServer((request, response) => {
    const path = normalize(new URL(request.url ?? '/', 'http://127.0.0.1').pathname);
    const pkg = /^\/pol\/(arena|core)\/(.+)$/.exec(path);
    const file =
      pkg !== null
        ? join(packages[pkg[1] as string] as string, pkg[2] as string)
        : join(pages, path === '/' ? 'index.html' : path);
    const headers = {
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
      'cache-control': 'no-store',
    };
    if (path === '/favicon.ico') {
      response.writeHead(204, headers).end();
      return;
    }
    if (path === '/') {
      response
        .writeHead(200, { ...headers, 'content-type': 'text/html' })
        .end('<!doctype html><title>claims</title><script type="module" src="/page.js"></script>');
      return;
    }
    if (!existsSync(file)) {
      response.writeHead(404, headers).end();
      return;
    }
    const body = readFileSync(file, 'utf8').replace(/from '@pol\/core(\/backend)?'/g, (_, sub) =>
      sub === undefined ? "from '/pol/core/index.js'" : "from '/pol/core/backend.js'",
    );
    const type = extname(file) === '.js' ? 'text/javascript' : 'application/octet-stream';
    response.writeHead(200, { ...headers, 'content-type': type }).end(body);
  });
  return new Promise((resolve) =>
    (server as Server).listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${((server as Server).address() as AddressInfo).port}/`),
    ),
  );
}

beforeAll(async () => {
  for (const dir of Object.values(packages)) {
    if (!existsSync(join(dir, 'index.js'))) throw new Error(`No build at ${dir}: build @pol/core and @pol/arena first.`);
  }
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `No Chromium at ${chromiumPath}: install Debian/Ubuntu's chromium package (sudo apt-get install -y chromium).`,
    );
  }
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--no-sandbox', // CI runs as root
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
});

test('in a cross-origin-isolated page, module workers racing for a region: exactly one wins each race', async () => {
  const url = await serve();
  const page = await (browser as Browser).newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  await page.goto(url);
  await page.waitForFunction(() => (globalThis as { __result?: unknown }).__result !== undefined, undefined, { timeout: 60_000 });
  const result = (await page.evaluate(() => (globalThis as { __result?: unknown }).__result)) as {
    error?: string;
    crossOriginIsolated: boolean;
    races: { winners: number; losers: string[]; filled: boolean; freed: boolean }[];
  };
  expect(result.error).toBeUndefined();
  expect(problems).toEqual([]);
  expect(result.crossOriginIsolated).toBe(true);
  expect(result.races).toHaveLength(40);
  for (const race of result.races) {
    expect(race).toEqual({ winners: 1, losers: ['POL_CONTENDED', 'POL_CONTENDED', 'POL_CONTENDED'], filled: true, freed: true });
  }
}, 120_000);
