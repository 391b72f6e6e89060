// Preloaded into the processes the benchmark starts (node --import): if the benchmark itself dies without
// cleaning up (SIGKILL, OOM), its children notice that their parent changed and shut down instead of lingering.
// A one-second unref'd timer; nothing else runs in the measured process.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) {
    setTimeout(() => process.exit(1), 5_000).unref();
    process.kill(process.pid, 'SIGTERM');
  }
}, 1_000).unref();
