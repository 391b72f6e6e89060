import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { glob, isDynamicPattern } from 'tinyglobby';
import yazl from 'yazl';
import { usageError } from './errors.js';

/** In a directory, the files taken as reports; the service skips a zip member that is not one, but why send it. */
export const REPORT_EXTENSIONS = ['.xml', '.json', '.trx'];

/**
 * @typedef {object} ReportFile
 * @property {string} path where it is on disk
 * @property {string} name its name in the upload: relative to the working directory where it is under it
 * @property {number} size
 */

/**
 * The report files that `args` name: files as they are, directories walked for *.xml, *.json and *.trx files,
 * glob patterns (`*`, `**`, `?`, `[...]`, `{a,b}`) expanded here (a CI shell may not). Each problem is a usage error
 * naming the argument: a missing file, a directory without reports, a pattern that matches nothing.
 * @param {string[]} args
 * @param {string} [cwd]
 * @returns {Promise<ReportFile[]>}
 */
export async function collectReports(args, cwd = process.cwd()) {
  /** @type {Map<string, ReportFile>} */
  const found = new Map();
  const add = (/** @type {string} */ path, /** @type {number} */ size) => {
    if (!found.has(path)) {
      found.set(path, { path, name: uploadName(path, cwd), size });
    }
  };
  for (const arg of args) {
    const path = resolve(cwd, arg);
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile()) {
      add(path, info.size);
    } else if (info?.isDirectory()) {
      const files = await walk(path);
      if (!files.length) {
        throw usageError(
          `${arg}: no report files (${REPORT_EXTENSIONS.map((e) => `*${e}`).join(', ')}) in this directory`,
        );
      }
      files.forEach((f) => add(f.path, f.size));
    } else if (info) {
      throw usageError(`${arg}: not a file or a directory`);
    } else if (isDynamicPattern(arg)) {
      const matches = await glob(arg, {
        cwd,
        absolute: true,
        onlyFiles: true,
        dot: false,
        expandDirectories: false,
      });
      if (!matches.length) {
        throw usageError(`${arg}: no file matches this pattern`);
      }
      for (const match of matches.sort()) {
        add(match, (await stat(match)).size);
      }
    } else {
      throw usageError(`${arg}: no such file or directory`);
    }
  }
  return [...found.values()];
}

/**
 * The report files under `dir`, in a stable order, without following links out of it.
 * @param {string} dir
 * @returns {Promise<{path: string, size: number}[]>}
 */
async function walk(dir) {
  /** @type {{path: string, size: number}[]} */
  const out = [];
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      out.push(...(await walk(path)));
    } else if (entry.isFile() && REPORT_EXTENSIONS.some((ext) => entry.name.toLowerCase().endsWith(ext))) {
      out.push({ path, size: (await stat(path)).size });
    }
  }
  return out;
}

/** @param {string} path @param {string} cwd */
function uploadName(path, cwd) {
  const rel = relative(cwd, path);
  const name = rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : basename(path);
  return name.split(sep).join('/');
}

/**
 * Several reports as one zip in a temporary folder (so that a retried upload sends the same bytes, and the
 * progress bar knows the size); `cleanup` removes it.
 * @param {ReportFile[]} files
 * @returns {Promise<{path: string, size: number, cleanup: () => Promise<void>}>}
 */
export async function zipReports(files) {
  const dir = await mkdtemp(join(tmpdir(), 'tms-upload-'));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const path = join(dir, 'reports.zip');
    const zip = new yazl.ZipFile();
    const names = new Set();
    for (const file of files) {
      let name = file.name;
      for (let i = 2; names.has(name); i++) {
        name = `${i}/${file.name}`;
      }
      names.add(name);
      zip.addFile(file.path, name, { compress: true });
    }
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(path));
    return { path, size: (await stat(path)).size, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * The Content-Type of one report sent as the raw body, by its name (the service detects the format from the content).
 * @param {string} name
 */
export function contentTypeOf(name) {
  const lower = name.toLowerCase();
  if (lower.endsWith('.zip')) {
    return 'application/zip';
  }
  if (lower.endsWith('.gz')) {
    return 'application/gzip';
  }
  if (lower.endsWith('.json')) {
    return 'application/json';
  }
  if (lower.endsWith('.xml') || lower.endsWith('.trx')) {
    return 'application/xml';
  }
  return 'application/octet-stream';
}

/**
 * Content-Disposition naming the upload (the service names the run after it), UTF-8 as RFC 6266 / 5987 say.
 * @param {string} name
 */
export function dispositionOf(name) {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
