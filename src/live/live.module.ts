import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { LiveController } from './live.controller.js';
import { LiveEvents } from './live-events.js';
import { LiveGateway } from './live.gateway.js';
import { LiveSockets } from './live-sockets.js';

/** The WebSocket gateway and the relay subscription (DESIGN.md, `live/`). The relay itself is infra/relay. */
@Module({
  imports: [AuthModule, AccessModule],
  controllers: [LiveController],
  providers: [LiveGateway, LiveSockets, LiveEvents],
})
export class LiveModule {}
