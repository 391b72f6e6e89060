import { Navigate, NavLink, Outlet, Route, Routes, useLocation, useNavigate } from 'react-router';
import { AdminAudit } from './pages/admin/Audit';
import { AdminGroups } from './pages/admin/Groups';
import { AdminSubscription } from './pages/admin/Subscription';
import { AdminUsers } from './pages/admin/Users';
import { AcceptInvitation, ForgotPassword, Register, ResetPassword, VerifyEmail } from './pages/Account';
import { Home } from './pages/Home';
import { NotFound, NumericIds } from './pages/NotFound';
import { ApiKeys } from './pages/profile/ApiKeys';
import { FailureDetail } from './pages/projects/failures/FailureDetail';
import { FailuresPage } from './pages/projects/failures/FailuresPage';
import { ProjectRuns } from './pages/projects/ProjectRuns';
import { ImportReport } from './pages/projects/ImportReport';
import { ComparePage } from './pages/projects/ComparePage';
import { Members } from './pages/projects/Members';
import { RetentionPage } from './pages/projects/retention/RetentionPage';
import { ResultPage } from './pages/projects/ResultPage';
import { RunPage } from './pages/projects/RunPage';
import { TestHistory } from './pages/projects/TestHistory';
import { SettingsPage } from './pages/projects/settings/SettingsPage';
import { TestsPage } from './pages/projects/tests/TestsPage';
import { Security } from './pages/profile/Security';
import { SignIn } from './pages/SignIn';
import { useMe, useSession, useSignedIn } from './session-context';
import { ErrorMessage, Loading, Page } from './ui/components';

export function App() {
  const { ready } = useSession();
  if (!ready) {
    return (
      <main className="page" id="main">
        <Loading what="Signing in" />
      </main>
    );
  }
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <Header />
      <Routes>
        <Route path="/sign-in" element={<SignIn />} />
        <Route path="/login" element={<Navigate to="/sign-in" replace />} />
        <Route path="/register" element={<Register />} />
        <Route path="/verify-email" element={<VerifyEmail />} />
        <Route path="/forgot-password" element={<ForgotPassword />} />
        <Route path="/reset-password" element={<ResetPassword />} />
        <Route path="/invitations/accept" element={<AcceptInvitation />} />
        <Route element={<Private />}>
          <Route path="/" element={<Home />} />
          <Route path="/projects" element={<Home />} />
          <Route element={<NumericIds />}>
            <Route path="/projects/:projectId" element={<ProjectRuns />} />
            <Route path="/projects/:projectId/import" element={<ImportReport />} />
            <Route path="/projects/:projectId/tests" element={<TestsPage />} />
            <Route path="/projects/:projectId/tests/:testId" element={<TestHistory />} />
            <Route path="/projects/:projectId/settings" element={<SettingsPage />} />
            <Route path="/projects/:projectId/members" element={<Members />} />
            <Route path="/projects/:projectId/retention" element={<RetentionPage />} />
            <Route path="/projects/:projectId/failures" element={<FailuresPage />} />
            <Route path="/projects/:projectId/failures/:failureId" element={<FailureDetail />} />
            <Route path="/runs/:runId" element={<RunPage />} />
            <Route path="/runs/:runId/results/:resultId" element={<ResultPage />} />
            <Route path="/runs/:runId/compare" element={<ComparePage />} />
          </Route>
          <Route path="/profile" element={<Navigate to="/profile/api-keys" replace />} />
          <Route path="/profile/api-keys" element={<ApiKeys />} />
          <Route path="/profile/security" element={<Security />} />
          <Route element={<AdminOnly />}>
            <Route path="/admin" element={<Navigate to="/admin/users" replace />} />
            <Route path="/admin/users" element={<AdminUsers />} />
            <Route path="/admin/groups" element={<AdminGroups />} />
            <Route path="/admin/audit" element={<AdminAudit />} />
            <Route path="/admin/subscription" element={<AdminSubscription />} />
          </Route>
        </Route>
        <Route path="*" element={<NotFound />} />
      </Routes>
    </>
  );
}

/** The routes under it: signed in, or on to the sign-in page (coming back here afterwards). */
function Private() {
  const signedIn = useSignedIn();
  const location = useLocation();
  if (!signedIn) {
    return (
      <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />
    );
  }
  return <Outlet />;
}

/** The routes under it: platform admins only; anyone else sees that they are not allowed (the API refuses anyway). */
function AdminOnly() {
  const { me, loading, error } = useMe();
  if (loading) {
    return (
      <main className="page" id="main">
        <Loading />
      </main>
    );
  }
  if (error) {
    return (
      <Page title="Error">
        <ErrorMessage error={error} />
      </Page>
    );
  }
  if (!me?.admin) {
    return (
      <Page title="Not allowed">
        <p>Only platform administrators may open the administration pages.</p>
      </Page>
    );
  }
  return <Outlet />;
}

function Header() {
  const signedIn = useSignedIn();
  const { me } = useMe();
  const { session } = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  return (
    <header className="top">
      <NavLink to="/" className="brand">
        Test Management
      </NavLink>
      {signedIn ? (
        <nav aria-label="Main" className="main-nav">
          <NavLink
            to="/projects"
            className={({ isActive }) =>
              isActive || location.pathname.startsWith('/runs/') ? 'active' : undefined
            }
          >
            Projects
          </NavLink>
          <NavLink to="/profile/api-keys">API keys</NavLink>
          <NavLink to="/profile/security">Security</NavLink>
          {me?.admin ? <NavLink to="/admin/users">Admin</NavLink> : null}
          <span className="who" title={me?.email}>
            {me?.fullName ?? ''}
          </span>
          <button
            type="button"
            className="link"
            onClick={() => {
              void session.logout().then(() => navigate('/sign-in'));
            }}
          >
            Sign out
          </button>
        </nav>
      ) : null}
    </header>
  );
}
