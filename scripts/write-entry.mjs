// The compiled tree keeps src/ and migrations/ side by side (dist/src, dist/migrations); this gives the
// service its documented entry point, dist/main.js.
import { writeFileSync } from 'node:fs';
writeFileSync(new URL('../dist/main.js', import.meta.url), "import './src/main.js';\n");
