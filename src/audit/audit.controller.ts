import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../common/decorators.js';
import { PageOf } from '../common/paging/page.js';
import { AuditService } from './audit.service.js';
import { AuditEventDto, AuditQueryDto } from './dto/audit-event.dto.js';

@ApiTags('Administration')
@ApiBearerAuth()
@AdminOnly()
@Controller('api/admin/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({ summary: 'The audit trail, newest first; platform admins only' })
  @ApiOkResponse({ type: PageOf(AuditEventDto) })
  list(@Query() query: AuditQueryDto) {
    return this.audit.list(query);
  }
}
