import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import type { EntityManager } from 'typeorm';
import { effectiveSettings } from '../common/project-settings.js';
import type { FlakyPolicy } from './flakiness.js';
import { SETTINGS_CHANGED_EVENT, type SettingsChangedEvent } from './stability.events.js';

/** How long a replica keeps a project's flaky policy: a change made through another replica applies after this. */
export const POLICY_TTL_MS = 5_000;
const MAX_PROJECTS = 10_000;

/**
 * Projects' flaky settings, read once per project every few seconds rather than once per batch. A change through
 * this replica applies at once (the settings' change event); through another, within POLICY_TTL_MS. A test is
 * judged by the policy in force when its results are written (a changed window or threshold reaches each test at
 * its next result: nothing is recomputed for the whole project).
 */
@Injectable()
export class FlakyPolicyCache {
  private readonly policies = new Map<string, { policy: FlakyPolicy; at: number }>();

  async get(tx: Pick<EntityManager, 'query'>, projectId: string): Promise<FlakyPolicy> {
    const cached = this.policies.get(projectId);
    if (cached && Date.now() - cached.at < POLICY_TTL_MS) {
      return cached.policy;
    }
    const rows: { settings: unknown }[] = await tx.query('SELECT settings FROM projects WHERE id = $1', [
      projectId,
    ]);
    const policy = effectiveSettings(rows[0]?.settings).flaky;
    if (this.policies.size >= MAX_PROJECTS) {
      this.policies.clear();
    }
    this.policies.set(projectId, { policy, at: Date.now() });
    return policy;
  }

  @OnEvent(SETTINGS_CHANGED_EVENT)
  forget(event: SettingsChangedEvent): void {
    this.policies.delete(event.projectId);
  }
}
