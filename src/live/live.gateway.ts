import type { IncomingMessage } from 'node:http';
import { HttpAdapterHost } from '@nestjs/core';
import { OnGatewayConnection, WebSocketGateway } from '@nestjs/websockets';
import type { Express } from 'express';
import type { WebSocket } from 'ws';
import { upgradeClientIp } from '../common/decorators.js';
import { LiveSockets, MAX_FRAME_BYTES } from './live-sockets.js';

/**
 * GET /ws: live updates (API.md, Live updates), on the HTTP server's port through @nestjs/platform-ws. Frames
 * over 64 KiB close the socket with 1009 (the ws library's maxPayload); the protocol itself is LiveSockets'.
 */
@WebSocketGateway({ path: '/ws', maxPayload: MAX_FRAME_BYTES })
export class LiveGateway implements OnGatewayConnection<WebSocket> {
  constructor(
    private readonly sockets: LiveSockets,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  handleConnection(client: WebSocket, request: IncomingMessage): void {
    const app = this.adapterHost.httpAdapter.getInstance<Express>();
    this.sockets.accept(client, upgradeClientIp(request, app));
  }
}
