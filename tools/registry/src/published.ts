/**
 * The packages as the next release publishes them, on a local registry: what every test here
 * installs from.
 */
import { join } from 'node:path';
import { type Packed, packAll, releaseVersions } from '@pol/packaging';
import { publish, stageForRelease } from './publish.js';
import { type Registry, startRegistry } from './registry.js';

/** A local registry serving every published package, and the versions it serves them at. */
export interface Published {
  readonly registry: Registry;
  readonly versions: ReadonlyMap<string, string>;
  /** The tarballs published, one per package. */
  readonly packed: readonly Packed[];
}

/** Start a registry under `work`, and publish every package to it (packed, staged at the release's versions). */
export async function publishPackages(work: string): Promise<Published> {
  const registry = await startRegistry(join(work, 'registry'));
  try {
    const versions = await releaseVersions();
    const packed = packAll(join(work, 'packs'));
    for (const p of packed) await publish(stageForRelease(p, versions, join(work, 'stage')), registry.url, registry.token, work);
    return { registry, versions, packed };
  } catch (error) {
    await registry.stop();
    throw error;
  }
}
