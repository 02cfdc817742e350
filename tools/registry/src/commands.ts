/**
 * Commands run as a user runs them in a project of their own: without the repository's
 * environment (pnpm's and npm's script variables, vitest's NODE_PATH into the repository's
 * node_modules, the workspace's bin folders on PATH), asynchronously so that the registry in this
 * process keeps serving, with their output kept for the failure message.
 */
import { spawn } from 'node:child_process';
import { dirname, sep } from 'node:path';
import { root } from '@pol/packaging';

/** What a user's shell would have: the system's and the network's settings, no script or workspace variables. */
const kept =
  /^(PATH|HOME|USER|LOGNAME|SHELL|TMPDIR|TEMP|TMP|LANG|LANGUAGE|LC_\w+|TERM|TZ|CI|DISPLAY|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy|VK_ICD_FILENAMES|XDG_RUNTIME_DIR|CHROMIUM_PATH)$/;

export function userEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (kept.test(key) && value !== undefined) env[key] = value;
  // This node first (the line under test), then the system's folders: none of the repository's
  // or of a package manager's bin folders.
  const here = dirname(process.execPath);
  const path = (env.PATH ?? '')
    .split(':')
    .filter((entry) => entry !== '' && !entry.startsWith(`${root}`) && !entry.includes(`${sep}node_modules${sep}`));
  env.PATH = [here, ...path.filter((entry) => entry !== here)].join(':');
  // The local registry is on this machine: never through a proxy.
  for (const key of ['NO_PROXY', 'no_proxy'])
    env[key] = [env[key], '127.0.0.1', 'localhost'].filter((v) => v !== undefined && v !== '').join(',');
  return env;
}

export interface Outcome {
  readonly status: number;
  /** stdout and stderr, interleaved as they came. */
  readonly output: string;
}

/** Run a command to its end (or `timeoutMs`, then kill it), with the user's environment. */
export function run(
  command: string,
  args: readonly string[],
  cwd: string,
  timeoutMs: number,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...userEnvironment(), ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs / 1000} s]`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ status: code ?? (signal === null ? 1 : 128), output });
    });
  });
}

/** The last lines of a command's output, for an assertion message. */
export function tail(outcome: Outcome, lines = 40): string {
  return outcome.output.trimEnd().split('\n').slice(-lines).join('\n');
}
