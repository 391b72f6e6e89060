import { ApiProperty } from '@nestjs/swagger';

export class TokenResponseDto {
  @ApiProperty({ description: 'The access JWT; send it as `Authorization: Bearer <accessToken>`' })
  accessToken: string;

  @ApiProperty({ example: 'Bearer' })
  tokenType: 'Bearer';

  @ApiProperty({ example: 900, description: 'Seconds until the access token expires' })
  expiresIn: number;
}
