import { NavLink } from 'react-router';

export function AdminNav() {
  return (
    <nav aria-label="Administration" className="sub-nav">
      <NavLink to="/admin/users">Users</NavLink>
      <NavLink to="/admin/groups">Groups</NavLink>
      <NavLink to="/admin/audit">Audit</NavLink>
      <NavLink to="/admin/subscription">Subscription</NavLink>
    </nav>
  );
}
