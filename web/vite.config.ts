import preact from '@preact/preset-vite';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The dashboard's build (npm run build:web): web/dist, one entry (the shell) and a chunk per page.
 * No inline script anywhere (the CSP has no 'unsafe-inline'): module preloads are plain <link>s.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [preact({ prerender: { enabled: false } })],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    // Which chunks the first load and each page load (npm run bench, part web: lib/bench/web.ts).
    manifest: true,
  },
});
