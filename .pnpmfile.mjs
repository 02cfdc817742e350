// pnpm's hooks for this workspace. pnpm reads this file on every install (its checksum is in
// pnpm-lock.yaml, so a change to it wants `pnpm install`) and before it packs a package.

/**
 * What a published package.json keeps: `pnpm pack` and `pnpm publish` (which `changeset publish`
 * runs) call this with the manifest they are about to put in the tarball, `workspace:` ranges
 * already replaced. A user installs the package and runs none of its scripts, so nothing that
 * only serves the repository ships: `devDependencies` (the private `@pol/doc-examples` among them,
 * which no registry has) and `scripts` (they build and test from files the tarball does not hold:
 * tsconfig.build.json, vitest.config.ts). tools/packaging's packed test opens every tarball and
 * checks what is left.
 *
 * @param {Record<string, unknown>} manifest
 */
function beforePacking(manifest) {
  const { devDependencies: _devDependencies, scripts: _scripts, ...published } = manifest;
  return published;
}

export const hooks = { beforePacking };
