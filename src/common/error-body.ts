import { STATUS_CODES } from 'node:http';
import { ApiProperty } from '@nestjs/swagger';

/** The body of every error response: `{status, error, message}`. */
export class ErrorBody {
  @ApiProperty({ example: 404 })
  status: number;

  @ApiProperty({ example: 'Not Found' })
  error: string;

  @ApiProperty({ example: 'Run 42 not found' })
  message: string;
}

export function errorBody(status: number, message: string): ErrorBody {
  return { status, error: STATUS_CODES[status] ?? 'Error', message };
}
