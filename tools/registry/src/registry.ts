/**
 * A local npm registry (verdaccio 6.8, in this process) on 127.0.0.1 at a free port, with its
 * storage and users in a folder of its own. It serves only what is published to it: no uplink, so
 * nothing is ever fetched from, or published to, a public registry through it.
 */
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runServer } from 'verdaccio';

export interface Registry {
  /** `http://127.0.0.1:PORT/`. */
  readonly url: string;
  /** A token with the right to publish, for `//127.0.0.1:PORT/:_authToken`. */
  readonly token: string;
  /** Stop serving and close every open connection. */
  stop(): Promise<void>;
}

/** Start a registry whose storage lives under `dir`. */
export async function startRegistry(dir: string): Promise<Registry> {
  mkdirSync(dir, { recursive: true });
  const server = (await runServer({
    self_path: join(dir, 'config.yaml'),
    storage: join(dir, 'storage'),
    auth: { htpasswd: { file: join(dir, 'htpasswd'), max_users: 1 } },
    uplinks: {},
    packages: {
      '@pol/*': { access: '$all', publish: '$authenticated' },
      '**': { access: '$all', publish: '$authenticated' },
    },
    log: { type: 'stdout', format: 'pretty', level: 'error' },
    web: { enable: false },
    // No uplink to ask whether a version exists elsewhere: publishing must not wait for one.
    publish: { allow_offline: true },
  } as never)) as Server;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    // The first user signs itself up (max_users: 1), and gets a token back.
    const response = await fetch(`${url}-/user/org.couchdb.user:pol`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'pol', password: `pol-${process.pid}-${Date.now()}` }),
    });
    const body = (await response.json()) as { token?: string; error?: string };
    if (response.status !== 201 || body.token === undefined) {
      throw new Error(`the local registry refused to create a user (${response.status}): ${body.error ?? JSON.stringify(body)}`);
    }
    return { url, token: body.token, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
