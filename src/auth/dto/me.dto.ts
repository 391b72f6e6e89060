import { ApiProperty } from '@nestjs/swagger';

export class MeDto {
  @ApiProperty({ example: 1 })
  id: number;

  @ApiProperty({ example: 'ada@example.com' })
  email: string;

  @ApiProperty({ example: 'Ada Lovelace' })
  fullName: string;

  @ApiProperty({ description: 'Platform administrator' })
  admin: boolean;

  @ApiProperty({ enum: ['LOCAL', 'LDAP'] })
  authSource: 'LOCAL' | 'LDAP';

  @ApiProperty()
  twoFactorEnabled: boolean;

  @ApiProperty()
  emailVerified: boolean;

  @ApiProperty({ example: '2026-11-22T10:15:00.000Z' })
  createdAt: string;
}
