/**
 * What the repository publishes, for the tests that check it (here and in `tools/registry`): the
 * workspace's package.json files, and the published packages packed as a release packs them.
 */
export { fileIn, filesIn, manifestIn, type Packed, packAll, pnpm } from './pack.js';
export { releaseVersions, satisfiesCaret } from './release.js';
export { type Manifest, publishedPackages, root, rootManifest, type WorkspacePackage, workspacePackages } from './workspace.js';
