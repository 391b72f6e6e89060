import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Temporary folders for one test file, removed together when it ends. */
export class Scratch {
  private readonly dirs: string[] = [];

  dir(prefix = 'tms-'): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.dirs.push(dir);
    return dir;
  }

  cleanup(): void {
    for (const dir of this.dirs.splice(0)) {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
