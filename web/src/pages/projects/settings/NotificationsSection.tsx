import { SettingsSection, Values } from './SettingsSection';

/**
 * Notifications: the project's webhooks and each member's mail about its runs. They are not part of the settings
 * resource (API.md keeps them as resources of their own); this service has neither yet, so their values are what
 * the project has: none. The notifications issue reads its webhooks and the caller's subscriptions here.
 */
export function NotificationsSection() {
  return (
    <SettingsSection
      id="notifications"
      title="Notifications"
      about="Who hears of a finished or failed run, a new failure or a flaky test: webhooks, and mail to members."
    >
      <Values
        label="Notifications"
        items={[
          ['Webhooks', 'none'],
          ['Mail to members', 'none sent'],
        ]}
      />
    </SettingsSection>
  );
}
