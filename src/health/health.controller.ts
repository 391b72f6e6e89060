import { Controller, Get, HttpCode, Inject, Optional, Res } from '@nestjs/common';
import {
  ApiExcludeEndpoint,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '../common/decorators.js';
import { errorBody, ErrorBody } from '../common/error-body.js';
import { KeyValueStore } from '../infra/kv/key-value-store.js';
import { IngestQueue } from '../infra/queue/ingest-queue.js';
import { LiveRelay } from '../infra/relay/live-relay.js';
import { LdapDirectory } from '../ldap/ldap-directory.js';
import { Metrics } from './metrics.js';

const CHECK_TIMEOUT_MS = 3_000;

@ApiTags('Operations')
@Public()
@Controller()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly kv: KeyValueStore,
    private readonly metrics: Metrics,
    private readonly queue: IngestQueue,
    private readonly relay: LiveRelay,
    @Optional() @Inject(LdapDirectory) private readonly directory?: LdapDirectory | null,
  ) {}

  @Get('api/health')
  @ApiOperation({ summary: 'Liveness: the process runs' })
  @ApiOkResponse({
    schema: { example: { status: 'up', directory: 'up' } },
    description: '`directory` (up or down) only with directory login on',
  })
  health() {
    // The directory is shown, never a reason to fail: local accounts sign in without it.
    // As last found (by a sign-in or a probe at most every 30 s, in the background): liveness never waits on it.
    return this.directory ? { status: 'up', directory: this.directory.recentState() } : { status: 'up' };
  }

  @Get('api/health/ready')
  @ApiOperation({
    summary: 'Readiness: database, key-value store and (when configured) broker and STOMP relay answer',
  })
  @ApiOkResponse({ schema: { example: { status: 'up', components: { database: 'up', kvstore: 'up' } } } })
  @ApiServiceUnavailableResponse({ type: ErrorBody, description: 'Names the part that does not answer' })
  async ready(@Res({ passthrough: true }) res: Response) {
    const checks: Record<string, () => Promise<unknown>> = {
      database: () => this.db.query('SELECT 1'),
      kvstore: () => this.kv.ping(),
    };
    if (this.queue.kind === 'rabbitmq') {
      checks.broker = async () => {
        if (!(await this.queue.isReady())) {
          throw new Error('broker not connected');
        }
      };
    }
    if (this.relay.kind === 'stomp') {
      checks.relay = () =>
        this.relay.isReady() ? Promise.resolve() : Promise.reject(new Error('STOMP relay not connected'));
    }
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => [name, await answers(check)] as const),
    );
    const down = results.filter(([, up]) => !up).map(([name]) => name);
    if (down.length) {
      res.status(503);
      return errorBody(503, `Not ready: ${down.join(', ')} ${down.length > 1 ? 'do' : 'does'} not answer`);
    }
    return { status: 'up', components: Object.fromEntries(results.map(([name]) => [name, 'up'])) };
  }

  @Get('metrics')
  @HttpCode(200)
  @ApiExcludeEndpoint()
  async metricsText(@Res() res: Response): Promise<void> {
    res.setHeader('Content-Type', this.metrics.registry.contentType);
    res.send(await this.metrics.registry.metrics());
  }
}

async function answers(check: () => Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
