import { Controller, Get } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { AppError, ErrorCode } from '../common/app-error.js';
import { Public } from '../common/decorators.js';

/** /ws without a WebSocket upgrade: the house error body, saying what the path is for. */
@ApiExcludeController()
@Public()
@Controller('ws')
export class LiveController {
  @Get()
  upgradeRequired(): never {
    throw new AppError(
      ErrorCode.UPGRADE_REQUIRED,
      'GET /ws is the live-update WebSocket: connect with a WebSocket client (Upgrade: websocket)',
    );
  }
}
