declare module 'pg-copy-streams' {
  import type { Submittable } from 'pg';
  import type { Writable } from 'node:stream';

  export interface CopyStreamQuery extends Writable, Submittable {
    rowCount: number;
  }

  export function from(text: string): CopyStreamQuery;
}
