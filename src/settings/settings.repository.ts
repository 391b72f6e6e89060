import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { SettingsPatch } from '../common/project-settings.js';

/** A project's stored settings (projects.settings: only what was set). */
@Injectable()
export class SettingsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async stored(projectId: string): Promise<unknown> {
    const rows: { settings: unknown }[] = await this.db.query('SELECT settings FROM projects WHERE id = $1', [
      projectId,
    ]);
    return rows[0]?.settings;
  }

  /**
   * Lays `patch` over what is stored, group by group, in one statement (two concurrent changes of different fields
   * both stay), and answers the stored settings after it.
   */
  async change(projectId: string, patch: SettingsPatch): Promise<unknown> {
    const [rows]: [{ settings: unknown }[], number] = await this.db.query(
      `UPDATE projects p SET settings = (
         SELECT coalesce(jsonb_object_agg(g.key, coalesce(p.settings -> g.key, '{}'::jsonb) || g.value), '{}'::jsonb)
           FROM jsonb_each($2::jsonb) g) || (p.settings - ARRAY(SELECT jsonb_object_keys($2::jsonb)))
        WHERE p.id = $1
        RETURNING settings`,
      [projectId, JSON.stringify(patch)],
    );
    return rows[0]?.settings;
  }
}
