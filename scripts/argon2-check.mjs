// Run after `npm install` (the package's postinstall): makes sure argon2's native addon works under every Node
// that may run the service here, and builds it from source when one does not.
//
// argon2 ships prebuilt binaries, and its prebuilt linux-x64 binary crashes Node 20 (a segmentation fault on the
// first hash), the Node that runs `node dist/main.js` on Debian 12 machines; Node 24 (the `node` devDependency that
// npm scripts run on, and the Docker image's) runs it fine. Building from source was asked of npm with
// `build-from-source=true` in .npmrc, which npm 11 warns about on every command ("Unknown project config") and will
// stop honouring. Instead: each Node found (this one, and the first `node` on PATH outside node_modules) hashes
// once with the installed addon; when one fails, the addon is compiled with the node-gyp that npm bundles, into
// argon2's build/Release/, which its loader (node-gyp-build) prefers to the prebuilt one. A machine where the
// prebuilt binary works (the Docker image) compiles nothing and needs no compiler.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, sep } from 'node:path';

const require = createRequire(import.meta.url);
const root = join(import.meta.dirname, '..');

function argon2Dir() {
  try {
    return dirname(require.resolve('argon2/package.json', { paths: [root] }));
  } catch {
    return undefined;
  }
}

/** The Nodes that may run the service: this one, and the machine's (the first on PATH outside node_modules). */
function nodes() {
  const found = [process.execPath];
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir || dir.split(sep).includes('node_modules')) {
      continue;
    }
    const candidate = join(dir, process.platform === 'win32' ? 'node.exe' : 'node');
    if (existsSync(candidate)) {
      found.push(candidate);
      break;
    }
  }
  return [...new Set(found)];
}

/** Whether `node` hashes with the installed addon (in a child: a crash must not be this process's). */
function works(node) {
  const probe = spawnSync(
    node,
    [
      '-e',
      "require('argon2').hash('probe', { timeCost: 2, memoryCost: 1024 }).then(() => process.exit(0), () => process.exit(1))",
    ],
    { cwd: root, stdio: 'ignore', timeout: 60_000 },
  );
  return probe.status === 0;
}

const dir = argon2Dir();
if (!dir) {
  process.exit(0); // Not installed (e.g. an install that left it out): nothing to check.
}
const failing = nodes().filter((node) => !works(node));
if (failing.length === 0) {
  process.exit(0);
}
console.log(
  `argon2: the installed binary does not run under ${failing.join(', ')}; building it from source…`,
);
const gyp = process.env.npm_config_node_gyp ?? require.resolve('node-gyp/bin/node-gyp.js', { paths: [root] });
const built = spawnSync(process.execPath, [gyp, 'rebuild'], {
  cwd: dir,
  stdio: 'inherit',
  env: { ...process.env, ZERO_AR_DATE: '1' },
});
if (built.status !== 0) {
  console.error('argon2: the build from source failed (it needs python3, make and a C++ compiler)');
  process.exit(1);
}
const still = failing.filter((node) => !works(node));
if (still.length) {
  console.error(`argon2: built from source, yet it still does not run under ${still.join(', ')}`);
  process.exit(1);
}
console.log('argon2: built from source');
