import { useEffect, useRef, useState } from 'react';
import { useSession } from '../session-context';
import type { LiveEvent } from './merge';

export type LiveState = 'connecting' | 'live' | 'offline';

/**
 * The project's live updates over GET /ws: authenticates with the session's access token (again whenever the
 * session refreshes it), subscribes, and hands every event to `onEvent`; `onResync` when the service says events
 * were lost, and after a reconnect. Reconnects with growing delays.
 */
export function useLiveProject(
  projectId: number,
  onEvent: (event: LiveEvent) => void,
  onResync: () => void,
): LiveState {
  const { session } = useSession();
  const [state, setState] = useState<LiveState>('connecting');
  const handlers = useRef({ onEvent, onResync });
  useEffect(() => {
    handlers.current = { onEvent, onResync };
  });

  useEffect(() => {
    let ws: WebSocket | undefined;
    let stopped = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let delay = 500;
    let connectedBefore = false;

    const connect = () => {
      const url = `${window.location.protocol === 'https:' ? 'wss:' : 'ws:'}//${window.location.host}/ws`;
      ws = new WebSocket(url);
      ws.onopen = () => {
        ws!.send(JSON.stringify({ type: 'auth', token: session.accessToken }));
        ws!.send(JSON.stringify({ type: 'subscribe', projectId }));
      };
      ws.onmessage = (message) => {
        const frame = JSON.parse(String(message.data)) as { type: string };
        if (frame.type === 'subscribed') {
          setState('live');
          delay = 500;
          if (connectedBefore) {
            handlers.current.onResync();
          }
          connectedBefore = true;
        } else if (frame.type === 'event') {
          handlers.current.onEvent(frame as LiveEvent);
        } else if (frame.type === 'resync') {
          handlers.current.onResync();
        }
      };
      ws.onclose = (close) => {
        setState('offline');
        if (stopped) {
          return;
        }
        // 4401: the token expired or was refused; a refresh first, then the socket again.
        const before = close.code === 4401 ? session.refresh() : Promise.resolve(true);
        void before.then((signedIn) => {
          if (!stopped && signedIn) {
            retry = setTimeout(connect, delay);
            delay = Math.min(delay * 2, 15_000);
          }
        });
      };
    };
    connect();
    // A refreshed access token goes to the open socket before the old one expires.
    const unsubscribe = session.subscribe(() => {
      if (ws?.readyState === WebSocket.OPEN && session.accessToken) {
        ws.send(JSON.stringify({ type: 'auth', token: session.accessToken }));
      }
    });
    return () => {
      stopped = true;
      clearTimeout(retry);
      unsubscribe();
      ws?.close(1000);
    };
  }, [projectId, session]);
  return state;
}
