// The API reference of the four published packages (`pnpm run docs` → docs/api). A JavaScript
// configuration rather than typedoc.json, for one function: the markdown-it hook below.

/**
 * TypeDoc names a heading's anchor, and lists it in the page's table of contents, by the heading's
 * text tokens only, so a heading that is or holds a code span (`### \`new Arena(slab)\``) lost it
 * there: an empty entry and an anchor named `_`. Giving each code span in a heading a text child
 * holding its code lets TypeDoc see that text; the heading itself still renders the code span.
 *
 * @param {import('markdown-it').default} parser
 */
function headingsKeepCodeSpans(parser) {
  parser.core.ruler.push('pol-heading-code-spans', (state) => {
    state.tokens.forEach((token, i) => {
      if (token.type !== 'inline' || state.tokens[i - 1]?.type !== 'heading_open') return;
      for (const child of token.children ?? []) {
        if (child.type !== 'code_inline' || child.children !== null) continue;
        const text = new state.Token('text', '', 0);
        text.content = child.content;
        child.children = [text];
      }
    });
  });
}

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  $schema: 'https://typedoc.org/schema.json',
  name: 'Pol',
  entryPointStrategy: 'packages',
  entryPoints: ['../../packages/core', '../../packages/arena', '../../packages/verbs', '../../packages/webgpu'],
  packageOptions: {
    excludePrivate: true,
    excludeInternal: true,
    disableSources: true,
  },
  readme: 'index.md',
  out: '../../docs/api',
  disableSources: true,
  treatWarningsAsErrors: true,
  markdownItLoader: headingsKeepCodeSpans,
};
