import { OnGatewayConnection, WebSocketGateway } from '@nestjs/websockets';
import type { WebSocket } from 'ws';
import { LiveSockets, MAX_FRAME_BYTES } from './live-sockets.js';

/**
 * GET /ws: live updates (API.md, Live updates), on the HTTP server's port through @nestjs/platform-ws. Frames
 * over 64 KiB close the socket with 1009 (the ws library's maxPayload); the protocol itself is LiveSockets'.
 */
@WebSocketGateway({ path: '/ws', maxPayload: MAX_FRAME_BYTES })
export class LiveGateway implements OnGatewayConnection<WebSocket> {
  constructor(private readonly sockets: LiveSockets) {}

  handleConnection(client: WebSocket): void {
    this.sockets.accept(client);
  }
}
