// Every ```ts example in the repository's README type-checks, runs against the built packages,
// and prints what its comments say.
import { docExamples } from '@pol/doc-examples';

docExamples({
  root: new URL('..', import.meta.url),
  imports: {},
  sources: false,
  readme: '../../README.md',
});
