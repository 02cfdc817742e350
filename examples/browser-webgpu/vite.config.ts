import { defineConfig } from 'vite';

export default defineConfig({
  // Relative asset URLs: the built page works from any folder or static host.
  base: './',
  build: { target: 'es2022' },
});
