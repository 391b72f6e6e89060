import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// The service serves dist/ at / (hashed files under /assets/ cached for a year, index.html never). In development,
// `npm run dev -w web` proxies the API to a service on :8080.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8080', '/ws': { target: 'ws://127.0.0.1:8080', ws: true } },
  },
  test: {
    environment: 'jsdom',
    globals: true,
    include: ['test/**/*.test.{ts,tsx}'],
    setupFiles: ['test/setup.ts'],
  },
});
