import { Controller, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiParam,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnprocessableEntityResponse,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AuthUser } from '../common/auth-user.js';
import { CurrentUser } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { ImportQueryDto, ImportResultDto } from './dto/import.dto.js';
import { IMPORT_FORMATS, ImportService } from './import.service.js';
import { RAW_TYPES } from './upload.js';

@ApiTags('Import')
@ApiBearerAuth()
@Controller('api/import')
export class ImportController {
  constructor(private readonly imports: ImportService) {}

  @Post(':format')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Import test reports as one finished run (REPORTER): the recommended way in',
    description:
      'The report streams through unpacking and a streaming parser into the results, in one transaction: all of ' +
      'it is stored or none of it. One or more `file` parts of a multipart/form-data body, or the raw file as the ' +
      'body; .zip archives (members in folders; those that are not reports of the format are skipped with a ' +
      'warning) and .gz files are unpacked. DTDs and external entities are never read. Any one text, attribute ' +
      'value or JSON string is cut to 128 KiB as it streams in; messages and traces are stored up to 64 KiB.',
  })
  @ApiParam({
    name: 'format',
    enum: IMPORT_FORMATS,
    description: '`auto` detects each file’s format from its content',
  })
  @ApiConsumes('multipart/form-data', ...RAW_TYPES)
  @ApiBody({
    schema: {
      type: 'object',
      properties: { file: { type: 'array', items: { type: 'string', format: 'binary' } } },
    },
  })
  @ApiCreatedResponse({ type: ImportResultDto })
  @ApiBadRequestResponse({
    type: ErrorBody,
    description: 'Not well-formed (line and column named), of another format, or an unsafe archive',
  })
  @ApiNotFoundResponse({ type: ErrorBody, description: 'No such project, or one the caller cannot see' })
  @ApiPayloadTooLargeResponse({
    type: ErrorBody,
    description: 'Over SVC_IMPORT_MAX_BYTES, received or unpacked',
  })
  @ApiUnprocessableEntityResponse({ type: ErrorBody, description: 'Read whole, but holds no test results' })
  @ApiTooManyRequestsResponse({
    type: ErrorBody,
    description:
      'The caller already runs SVC_IMPORT_MAX_CONCURRENT_PER_USER imports (default 2); Retry-After: 10',
  })
  @ApiUnsupportedMediaTypeResponse({
    type: ErrorBody,
    description: 'A Content-Type the import does not read',
  })
  async import(
    @CurrentUser() user: AuthUser,
    @Param('format') format: string,
    @Query() query: ImportQueryDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ImportResultDto> {
    try {
      return await this.imports.import(user, format, query, req);
    } catch (error) {
      // Refused before the body was read whole: answer now and close, rather than wait for the rest of it.
      if (!req.complete) {
        res.setHeader('Connection', 'close');
      }
      throw error;
    }
  }
}
