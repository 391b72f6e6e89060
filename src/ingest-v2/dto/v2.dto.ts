import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsUUID, ValidateNested } from 'class-validator';
import { CreateRunDto, FinishRunDto, ResultItemDto, RunCountsDto } from '../../results/dto/results.dto.js';
import type { RunStatus } from '../../results/entities.js';

export class CreateRunV2Dto extends CreateRunDto {
  @ApiProperty({ description: 'Client-supplied run id (RFC 4122, any version)' })
  @IsUUID('all', { message: 'uuid must be a UUID' })
  uuid: string;
}

export class ResultItemV2Dto extends ResultItemDto {
  @ApiProperty({ description: 'Client-supplied result id (RFC 4122); sending it again changes nothing' })
  @IsUUID('all', { message: 'uuid must be a UUID' })
  declare uuid: string;
}

export class AddResultsV2Dto {
  @ApiProperty({ type: [ResultItemV2Dto], description: 'At most 5000' })
  @IsArray()
  @ArrayMinSize(1, { message: 'results must hold at least one result' })
  @ArrayMaxSize(5000, { message: 'results must hold at most 5000 results' })
  @ValidateNested({ each: true })
  @Type(() => ResultItemV2Dto)
  results: ResultItemV2Dto[];
}

export class FinishRunV2Dto extends FinishRunDto {}

export class AcceptedUuidDto {
  @ApiProperty({ example: '0b6f3c5e-8a7d-4c1b-9d2f-4e5a6b7c8d9e' })
  uuid: string;
}

export class AcceptedUuidsDto {
  @ApiProperty({ type: [String] })
  uuids: string[];
}

export class RunV2StatusDto {
  @ApiProperty() uuid: string;
  @ApiProperty({ description: 'The numeric id V1 uses' }) id: number;
  @ApiProperty({ enum: ['IN_PROGRESS', 'FINISHED'] }) status: RunStatus;
  @ApiProperty({ type: RunCountsDto }) counts: RunCountsDto;
}
