// Child processes and clean-up for the benchmark: every process started here is tracked and ended on the way
// out — normal completion, an error, SIGINT/SIGTERM/SIGHUP, or process exit (SIGKILL as a last resort).
import { spawn } from 'node:child_process';

const children = new Set();
const cleanups = [];
let cleaningUp;

/** spawn() whose child is killed whenever the benchmark ends. */
export function spawnTracked(command, args, options = {}) {
  const child = spawn(command, args, options);
  children.add(child);
  child.once('exit', () => children.delete(child));
  child.once('error', () => children.delete(child));
  return child;
}

/** True while the child has neither exited nor been reaped. */
export function isRunning(child) {
  return child.exitCode === null && child.signalCode === null;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
export async function stopChild(child, graceMs = 5_000) {
  child.expectedExit = true;
  if (!isRunning(child)) {
    return;
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => isRunning(child) && child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Registers clean-up work (stop a process, drop a database…); run last-in first-out by runCleanups(). */
export function onCleanup(fn) {
  cleanups.push(fn);
}

/** Runs every clean-up once, then stops any child still tracked. Errors are reported, never thrown. */
export function runCleanups() {
  cleaningUp ??= (async () => {
    while (cleanups.length) {
      const fn = cleanups.pop();
      try {
        await fn();
      } catch (error) {
        console.error(`bench: clean-up failed: ${error?.message ?? error}`);
      }
    }
    await Promise.all([...children].map((child) => stopChild(child)));
  })();
  return cleaningUp;
}

/** Installs the handlers that guarantee no child outlives the benchmark. */
export function installExitHandlers() {
  process.on('exit', () => {
    for (const child of children) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      console.error(`\nbench: ${signal} received, stopping child processes…`);
      // A second signal exits at once; the 'exit' handler still kills the children.
      process.once(signal, () => process.exit(130));
      runCleanups().finally(() => process.exit(130));
    });
  }
  const fatal = (error) => {
    console.error('bench: fatal:', error);
    runCleanups().finally(() => process.exit(1));
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);
}
