import { Injectable } from '@nestjs/common';
import argon2 from 'argon2';

/** argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane): about a sixth of the library default's cost. */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

@Injectable()
export class PasswordHasher {
  private dummy?: Promise<string>;

  hash(password: string): Promise<string> {
    return argon2.hash(password, OPTIONS);
  }

  async verify(hash: string, password: string): Promise<boolean> {
    try {
      return await argon2.verify(hash, password);
    } catch {
      return false;
    }
  }

  /** Spends the time of one verification, so an unknown user is as slow to refuse as a wrong password. */
  async verifyDummy(password: string): Promise<false> {
    this.dummy ??= this.hash('dummy password that nobody has');
    await this.verify(await this.dummy, password);
    return false;
  }
}
