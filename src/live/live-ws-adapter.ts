import { Logger } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { WebSocket, WebSocketServer } from 'ws';

/**
 * @nestjs/platform-ws's adapter, less its logging of every socket's errors as an ERROR with a stack: a socket's
 * errors are its client's (a text frame that is not UTF-8, a frame over 64 KiB; ws closes it with 1007 or 1009),
 * and LiveSockets logs them as that, rate-limited. The server's own errors are still logged as errors.
 */
export class LiveWsAdapter extends WsAdapter {
  private readonly log = new Logger('LiveSockets');

  override bindErrorHandler(server: WebSocketServer): WebSocketServer {
    // A listener from the first moment: an 'error' without one would throw (LiveSockets adds its own on accept).
    server.on('connection', (ws: WebSocket) => ws.on('error', () => undefined));
    server.on('error', (error) => this.log.error(error.stack ?? error.message));
    return server;
  }
}
