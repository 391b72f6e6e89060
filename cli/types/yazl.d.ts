// The part of yazl's API that the command uses (yazl ships no types of its own).
declare module 'yazl' {
  import type { Readable } from 'node:stream';

  export class ZipFile {
    outputStream: Readable;
    addFile(
      realPath: string,
      metadataPath: string,
      options?: { compress?: boolean; mtime?: Date; mode?: number },
    ): void;
    end(options?: { forceZip64Format?: boolean }, callback?: (totalSize: number) => void): void;
  }

  const yazl: { ZipFile: typeof ZipFile };
  export default yazl;
}
