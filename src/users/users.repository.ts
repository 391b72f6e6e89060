import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { UserEntity } from './user.entity.js';

@Injectable()
export class UsersRepository {
  constructor(@InjectRepository(UserEntity) private readonly users: Repository<UserEntity>) {}

  findById(id: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ id });
  }

  findByEmail(email: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ email: email.toLowerCase() });
  }

  findByDirectoryId(directoryId: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ directoryId });
  }

  save(user: Partial<UserEntity>): Promise<UserEntity> {
    return this.users.save(this.users.create({ ...user, email: user.email?.toLowerCase() }));
  }

  async update(id: string, changes: Partial<UserEntity>): Promise<void> {
    await this.users.update({ id }, changes);
  }
}
