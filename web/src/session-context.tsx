import { useQuery, useQueryClient } from '@tanstack/react-query';
import {
  createContext,
  type ReactNode,
  useContext,
  useEffect,
  useMemo,
  useState,
  useSyncExternalStore,
} from 'react';
import { type Api, apiOf, type Me } from './api/client';
import type { Session } from './api/session';

interface SessionContextValue {
  session: Session;
  api: Api;
  /** False until the refresh on load has answered. */
  ready: boolean;
}

const SessionContext = createContext<SessionContextValue | undefined>(undefined);

/** Provides the session and the API; refreshes once on load (the HttpOnly cookie may hold a session). */
export function SessionProvider({ session, children }: { session: Session; children: ReactNode }) {
  const [ready, setReady] = useState(false);
  const api = useMemo(() => apiOf(session), [session]);
  useEffect(() => {
    let live = true;
    void session.refresh().finally(() => live && setReady(true));
    return () => {
      live = false;
    };
  }, [session]);
  return <SessionContext.Provider value={{ session, api, ready }}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionContextValue {
  const value = useContext(SessionContext);
  if (!value) {
    throw new Error('useSession outside SessionProvider');
  }
  return value;
}

export function useApi(): Api {
  return useSession().api;
}

/** Whether signed in, re-rendering on every change. */
export function useSignedIn(): boolean {
  const { session } = useSession();
  return useSyncExternalStore(
    (listener) => session.subscribe(listener),
    () => session.signedIn,
  );
}

/** The signed-in user (GET /api/auth/me), while signed in. */
export function useMe(): { me: Me | undefined; loading: boolean; error: unknown } {
  const { api } = useSession();
  const signedIn = useSignedIn();
  const queries = useQueryClient();
  useEffect(() => {
    if (!signedIn) {
      queries.clear();
    }
  }, [signedIn, queries]);
  const query = useQuery({ queryKey: ['me'], queryFn: () => api.me(), enabled: signedIn });
  return { me: query.data, loading: query.isPending && signedIn, error: query.error };
}
