import { BeforeApplicationShutdown, Global, Inject, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { InProcessRelay } from './in-process.relay.js';
import { LiveRelay } from './live-relay.js';
import { StompRelay } from './stomp.relay.js';

/** The broker's STOMP plugin when SVC_BROKER_STOMP_HOST is set, otherwise in-process. A broker down at boot does not stop the service. */
export async function createLiveRelay(config: AppConfig): Promise<LiveRelay> {
  const stomp = config.relay.stomp;
  if (!stomp) {
    return new InProcessRelay();
  }
  const relay = new StompRelay(stomp, config.relay.topic);
  await relay.start();
  return relay;
}

@Global()
@Module({
  providers: [{ provide: LiveRelay, inject: [AppConfig], useFactory: createLiveRelay }],
  exports: [LiveRelay],
})
export class RelayModule implements BeforeApplicationShutdown {
  constructor(@Inject(LiveRelay) private readonly relay: LiveRelay) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.relay.close();
  }
}
