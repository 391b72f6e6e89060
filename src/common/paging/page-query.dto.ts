import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { distinctList, MAX_LIST_VALUES } from '../query-list.js';

export const MAX_PAGE_SIZE = 500;
/** Far past any list's end at any size, yet page × size stays a safe integer for OFFSET. */
export const MAX_PAGE = 1_000_000;

function toInt({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
}

/** `page` (zero-based), `size` (1..500) and repeatable `sort=field,asc|desc`; the field list is per resource. */
export class PageQueryDto {
  @ApiPropertyOptional({ description: 'Zero-based page number', default: 0, minimum: 0, maximum: MAX_PAGE })
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'page must be a whole number' })
  @Min(0, { message: `page must be between 0 and ${MAX_PAGE}` })
  @Max(MAX_PAGE, { message: `page must be between 0 and ${MAX_PAGE}` })
  page?: number;

  @ApiPropertyOptional({ description: 'Page size', default: 20, minimum: 1, maximum: MAX_PAGE_SIZE })
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'size must be a whole number' })
  @Min(1, { message: `size must be between 1 and ${MAX_PAGE_SIZE}` })
  @Max(MAX_PAGE_SIZE, { message: `size must be between 1 and ${MAX_PAGE_SIZE}` })
  size?: number;

  @ApiPropertyOptional({
    description: `Sort order as \`field,asc|desc\`; repeatable (at most ${MAX_LIST_VALUES} times; a field sorts by its first occurrence). Only the fields each list documents.`,
    type: [String],
    maxItems: MAX_LIST_VALUES,
  })
  @IsOptional()
  @Transform(distinctList('sort', { split: false }))
  @IsString({ each: true })
  @Matches(/^[A-Za-z][A-Za-z0-9]*(,(asc|desc|ASC|DESC))?$/, {
    each: true,
    message: 'sort must look like field,asc or field,desc',
  })
  sort?: string[];
}
