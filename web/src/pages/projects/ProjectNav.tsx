import { NavLink } from 'react-router';
import { type ProjectRole, roleAtLeast } from '../../api/client';

/**
 * A project's pages: its runs, its tests, its failures, its members, and its settings (retention among them), the page shown marked; the import for those
 * who may report (REPORTER and up), once the caller's role is known.
 */
export function ProjectNav({ projectId, role }: { projectId: number; role: ProjectRole | undefined }) {
  const base = `/projects/${projectId}`;
  return (
    <nav className="sub-nav project-nav" aria-label="Project">
      <NavLink to={base} end>
        Runs
      </NavLink>
      <NavLink to={`${base}/tests`}>Tests</NavLink>
      <NavLink to={`${base}/failures`}>Failures</NavLink>
      <NavLink to={`${base}/members`}>Members</NavLink>
      <NavLink to={`${base}/settings`}>Settings</NavLink>
      {role && roleAtLeast(role, 'REPORTER') ? (
        <NavLink to={`${base}/import`}>Import a report</NavLink>
      ) : null}
    </nav>
  );
}
