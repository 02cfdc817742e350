/**
 * The page, built with Vite, served on 127.0.0.1, opened in headless Chromium with WebGPU
 * (SwiftShader when there is no GPU): it must train (the loss falls) and draw its picture. A
 * missing browser or adapter fails these tests, never skips them.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const types: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
};

let out: string;
let url: string;
let server: Server;
let browser: Browser | undefined;
let page: Page;
const problems: string[] = [];

/** A static file server for the built page, on a free port of 127.0.0.1 (a secure context: WebGPU needs one). */
function serve(dir: string): Promise<string> {
  server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(dir, path.endsWith('/') ? `${path}index.html` : path);
    if (!file.startsWith(dir) || !existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)),
  );
}

beforeAll(async () => {
  // Build into a folder of our own: turbo may be building dist/ at the same moment.
  out = mkdtempSync(join(tmpdir(), 'pol-browser-webgpu-'));
  await build({ root, logLevel: 'warn', build: { outDir: out, emptyOutDir: true } });
  url = await serve(out);
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `No Chromium at ${chromiumPath}: install Debian/Ubuntu's chromium package (sudo apt-get install -y chromium libvulkan1).`,
    );
  }
  browser = await chromium.launch({
    executablePath: chromiumPath,
    // Playwright runs it headless, with a fresh profile of its own.
    args: [
      '--no-sandbox', // CI runs as root
      '--enable-unsafe-webgpu',
      '--disable-dev-shm-usage', // containers often have a tiny /dev/shm
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.status !== 'loading', undefined, { timeout: 120_000 });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
  if (out !== undefined) rmSync(out, { recursive: true, force: true });
});

test('the page trains the perceptron on WebGPU: the loss falls', async () => {
  const status = await page.evaluate(() => ({
    state: document.body.dataset.status,
    text: document.querySelector('#status')?.textContent,
  }));
  expect(status.text).toMatch(/^200 steps on /);
  expect(status.state).toBe('done');
  expect(problems).toEqual([]);
  const result = await page.evaluate(() => window.polResult);
  expect(result?.losses).toHaveLength(200);
  const [first, last] = [result?.losses[0] ?? Number.NaN, result?.losses.at(-1) ?? Number.NaN];
  expect(first).toBeGreaterThan(1);
  expect(last).toBeLessThan(first / 5);
  // The slab was sized from the watermark.
  expect(result?.capacity).toBe(Math.ceil((result?.watermark ?? 0) / 4) * 4);
});

test('the picture is drawn: many colours, most of them the frames and ranges', async () => {
  const pixels = await page.evaluate(() => {
    const canvas = document.querySelector<HTMLCanvasElement>('#picture');
    const g = canvas?.getContext('2d');
    if (canvas == null || g == null) return undefined;
    const { data } = g.getImageData(0, 0, canvas.width, canvas.height);
    const colours = new Set<number>();
    let inked = 0;
    for (let i = 0; i < data.length; i += 4) {
      const [r, gr, b] = [data[i] ?? 0, data[i + 1] ?? 0, data[i + 2] ?? 0];
      colours.add((r << 16) | (gr << 8) | b);
      if (r + gr + b < 3 * 250) inked++;
    }
    return { colours: colours.size, inked: inked / (data.length / 4) };
  });
  expect(pixels).toBeDefined();
  expect(pixels?.colours).toBeGreaterThan(20);
  expect(pixels?.inked).toBeGreaterThan(0.15);
  const shot = process.env.POL_SCREENSHOT;
  if (shot !== undefined && shot !== '') writeFileSync(shot, await page.screenshot({ fullPage: true }));
  // The arena picture alone (what the root README shows): POL_PICTURE=picture.png.
  const picture = process.env.POL_PICTURE;
  if (picture !== undefined && picture !== '') writeFileSync(picture, await page.locator('#picture').screenshot());
});

/** The page in a browser without WebGPU (`navigator.gpu` removed) or without an adapter, as a script run before the page's own makes it. */
async function openWithout(
  what: 'navigator.gpu' | 'an adapter',
): Promise<{ state: string | undefined; text: string; hints: string[] }> {
  const other = await (browser as Browser).newPage();
  try {
    await other.addInitScript((missing) => {
      if (missing === 'navigator.gpu') {
        // An accessor of Navigator.prototype: without it, `'gpu' in navigator` is false, as in a browser without WebGPU.
        delete (Navigator.prototype as { gpu?: unknown }).gpu;
      } else {
        const gpu = (navigator as Navigator & { gpu: GPU }).gpu;
        gpu.requestAdapter = async () => null;
      }
    }, what);
    await other.goto(url);
    await other.waitForFunction(() => document.body.dataset.status !== 'loading', undefined, { timeout: 60_000 });
    return await other.evaluate(() => ({
      state: document.body.dataset.status,
      text: document.querySelector('#status')?.textContent ?? '',
      hints: [...document.querySelectorAll('#how-to-get-webgpu li')].map((li) => li.textContent ?? ''),
    }));
  } finally {
    await other.close();
  }
}

test.each(['navigator.gpu', 'an adapter'] as const)('without %s, the page says so and how to get WebGPU', async (what) => {
  const shown = await openWithout(what);
  expect(shown.state).toBe('unsupported');
  expect(shown.text).toMatch(what === 'navigator.gpu' ? /no WebGPU \(navigator\.gpu is missing\)/ : /no adapter/);
  const hints = shown.hints.join('\n');
  // Browser by browser, and the Linux flags for Chromium.
  for (const browserName of ['Chrome', 'Edge', 'Firefox', 'Safari']) expect(hints).toContain(browserName);
  expect(hints).toContain('--enable-unsafe-webgpu');
  expect(hints).toContain('--enable-features=Vulkan');
  expect(hints).toMatch(/secure context/);
});
