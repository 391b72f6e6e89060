import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../support/http.js';
import { parseMessage, tokenIn } from '../support/smtp.js';
import { ADMIN, WebHarness } from './harness.js';

/**
 * Issue #34 items 14-16 in Chromium: the import page by role and by name, a sort in words, a success notice that
 * goes when the next action fails, group members found by name, and the audit trail in words.
 */
describe('The import page, notices, groups and the audit in Chromium', () => {
  const ui = new WebHarness();
  const PASSWORD = 'viola-long-passphrase';

  /** A person with an account, made the way people join: a workspace invitation from its mail, accepted. */
  async function invitedUser(email: string, fullName: string): Promise<number> {
    const admin = await ui.api();
    await admin('POST', '/api/workspace/invitations', { email });
    const outbox = join(ui.dataDir, 'outbox');
    const token = await eventually(async () => {
      const mails = existsSync(outbox)
        ? readdirSync(outbox).filter((f) => f.endsWith('-workspace-invitation.eml'))
        : [];
      const mail = mails
        .map((f) => parseMessage(readFileSync(join(outbox, f), 'utf8')))
        .find((m) => m.raw.includes(email));
      return mail ? tokenIn(mail) : undefined;
    });
    const accepted = await fetch(`${ui.base}/api/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, fullName, password: PASSWORD }),
    });
    expect(accepted.status).toBe(200);
    const users = (await admin('GET', `/api/admin/users?q=${encodeURIComponent(email)}`)) as unknown as {
      content: { id: number }[];
    };
    return users.content[0].id;
  }

  it("shows a VIEWER the role the import page takes and no form; a REPORTER the form, under the project's name", async () => {
    const admin = await ui.api();
    const project = (await admin('POST', '/api/projects', { key: 'WEB', name: 'Web shop' }))!;
    const viola = await invitedUser('viola@example.com', 'Viola Viewer');
    await admin('PUT', `/api/projects/${project.id}/members/${viola}`, { role: 'VIEWER' });

    const page = await ui.newPage();
    await ui.signIn(page, 'viola@example.com', PASSWORD);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    // The project page offers no import to a viewer.
    await page.goto(`${ui.base}/projects/${project.id}`);
    await page.getByRole('heading', { name: 'Web shop' }).waitFor();
    await page.getByText('● Live').waitFor();
    expect(await page.getByRole('link', { name: 'Import a report' }).count()).toBe(0);
    // Nor does the import page itself, opened by its address.
    await page.goto(`${ui.base}/projects/${project.id}/import`);
    await page.getByRole('heading', { name: 'Import a report into Web shop' }).waitFor();
    await page.getByText('You need the Reporter role to import reports into Web shop.').waitFor();
    expect(await page.getByLabel('Drop a report here, or choose one').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Import' }).count()).toBe(0);
    await ui.check(page, 'import-viewer');

    await admin('PUT', `/api/projects/${project.id}/members/${viola}`, { role: 'REPORTER' });
    await page.reload();
    await page.getByRole('heading', { name: 'Import a report into Web shop' }).waitFor();
    await page.getByLabel('Drop a report here, or choose one').waitFor();
    expect(await page.getByText('You need the Reporter role').count()).toBe(0);
    expect(await page.title()).toBe('Import a report into Web shop · Test Management');
    await ui.check(page, 'import-reporter');
    await page.goto(`${ui.base}/projects/${project.id}`);
    await page.getByRole('link', { name: 'Import a report' }).waitFor();
    // A project that is not there (or not theirs): the API's message, no form.
    await page.goto(`${ui.base}/projects/999999/import`);
    await page.getByRole('alert').filter({ hasText: 'Project 999999 not found' }).waitFor();
    expect(await page.getByLabel('Drop a report here, or choose one').count()).toBe(0);
    await ui.check(page, 'import-not-found');
    await page.context().close();
  }, 90_000);

  it("describes a results table's sort by the column's label", async () => {
    const admin = await ui.api();
    const project = (await admin('POST', '/api/projects', { key: 'SORT', name: 'Sorted' }))!;
    const run = (await admin('POST', `/api/projects/${project.id}/runs`, { name: 'nightly' }))!;
    await admin('POST', `/api/runs/${run.id}/results`, {
      results: [
        { name: 'quick', suite: 'S', status: 'PASSED', durationMs: 5 },
        { name: 'slow', suite: 'S', status: 'PASSED', durationMs: 5000 },
      ],
    });
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/runs/${run.id}`);
    await page.getByRole('button', { name: /^Duration/ }).click();
    await page.getByText('2 results, by Duration ascending', { exact: true }).waitFor();
    await page.getByRole('button', { name: /^Duration/ }).click();
    await page.getByText('2 results, by Duration descending', { exact: true }).waitFor();
    expect(await page.getByText(/durationMs/).count()).toBe(0);
    await ui.check(page, 'run-sorted-by-duration');
    await page.context().close();
  }, 60_000);

  it('adds a group member found by name, says so, and takes the notice away when the next change fails', async () => {
    const admin = await ui.api();
    await invitedUser('grace@example.com', 'Grace Hopper');
    await admin('POST', '/api/admin/groups', { name: 'QA-Team' });
    await admin('POST', '/api/admin/groups', { name: 'Ops' });
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/admin/groups`);

    // A group with no members, and a search that matches no one.
    await page.getByRole('button', { name: 'Ops' }).click();
    await page.getByText('No members yet').waitFor();
    await page.getByLabel('Find by name or email').fill('zebedee');
    await page.getByText('No user matches “zebedee”.').waitFor();
    await ui.check(page, 'groups-no-members-no-match');
    await page.getByRole('button', { name: 'Ops' }).click();

    await page.getByRole('button', { name: 'QA-Team' }).click();
    await page.getByLabel('Find by name or email').fill('hopper');
    const matches = page.getByRole('list', { name: 'People matching “hopper”' });
    await matches.getByText('grace@example.com').waitFor();
    await ui.check(page, 'groups-search');
    // By keyboard: from the search box, Tab reaches the match's Add button; Enter adds.
    await page.getByLabel('Find by name or email').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByText('Grace Hopper (grace@example.com) was added.').waitFor();
    // The keyboard's place: back in the search box, the button it pressed being gone.
    expect(await page.getByLabel('Find by name or email').and(page.locator(':focus')).count()).toBe(1);
    const members = page.getByRole('list', { name: 'Members of QA-Team' });
    // Name and email, one over the other.
    await members.locator('.person', { hasText: 'Grace Hopper' }).getByText('grace@example.com').waitFor();
    await matches.getByText('a member').waitFor();
    await ui.check(page, 'groups-member-added');
    await page.emulateMedia({ colorScheme: 'dark' });
    await ui.shoot(page, 'groups-member-added-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // The next change fails (another group has the name): its error, and the notice before it gone.
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Ops');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('alert').filter({ hasText: 'Ops' }).waitFor();
    expect(await page.getByText('was added.').count()).toBe(0);
    await ui.check(page, 'groups-error');
    await page.context().close();
  }, 90_000);

  it("shows the audit trail's actor by email and a project by its name, a deleted one as such", async () => {
    const admin = await ui.api();
    const shop = (await admin('POST', '/api/projects', { key: 'AUD', name: 'Audited shop' }))!;
    const gone = (await admin('POST', '/api/projects', { key: 'GONE', name: 'Gone shop' }))!;
    await admin('POST', '/api/admin/groups', { name: 'Auditors' });
    await admin('DELETE', `/api/projects/${gone.id}`);
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/admin/audit?type=PROJECT_CREATED`);
    const row = page.getByRole('row').filter({ hasText: 'project Audited shop' });
    await row.getByRole('cell', { name: ADMIN }).waitFor();
    await page.getByRole('cell', { name: `project #${gone.id} (deleted) · key: GONE` }).waitFor();
    expect(await page.getByText(`project:${shop.id}`).count()).toBe(0);
    await ui.check(page, 'audit-in-words');
    // Every type: groups by name, users by email.
    await page.getByLabel('Type').selectOption('');
    await page
      .getByRole('cell', { name: /^group QA-Team/ })
      .first()
      .waitFor();
    await ui.check(page, 'audit-all');
    await page.context().close();
  }, 60_000);
});
