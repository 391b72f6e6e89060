import { Module, OnModuleInit } from '@nestjs/common';
import { Metrics } from '../health/metrics.js';
import { AccessModule } from '../access/access.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { LiveController } from './live.controller.js';
import { LiveEvents } from './live-events.js';
import { LiveGateway } from './live.gateway.js';
import { LiveRevocations } from './live-revocations.js';
import { LiveSockets } from './live-sockets.js';

/** The WebSocket gateway and the relay subscription (DESIGN.md, `live/`). The relay itself is infra/relay. */
@Module({
  imports: [AuthModule, AccessModule],
  controllers: [LiveController],
  providers: [LiveGateway, LiveSockets, LiveEvents, LiveRevocations],
})
export class LiveModule implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly sockets: LiveSockets,
  ) {}

  onModuleInit(): void {
    this.metrics.gaugeFrom(
      'tms_ws_connections',
      'Open WebSocket connections (GET /ws) on this replica',
      () => this.sockets.size,
    );
  }
}
