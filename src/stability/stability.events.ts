/** Domain events of stability/: the live-update gateway relays them to subscribers of the project. */
export const STABILITY_EVENT = 'stability.event';

export interface StabilityEvent {
  projectId: string;
  event: 'test.flaky' | 'test.quarantined' | 'test.released';
  testId: string;
  /** The run whose results made it so (none for a person's quarantine or release, or an `until` that passed). */
  runId?: string;
}

/** A project's settings changed (settings/ emits it): cached policies of the project are read again. */
export const SETTINGS_CHANGED_EVENT = 'project.settings.changed';

export interface SettingsChangedEvent {
  projectId: string;
}
