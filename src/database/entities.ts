import {
  GroupBindingEntity,
  GroupEntity,
  GroupMemberEntity,
  InvitationEntity,
  ProjectEntity,
  ProjectMemberEntity,
} from '../access/entities.js';
import { ApiTokenEntity } from '../api-tokens/api-token.entity.js';
import { AuditEventEntity } from '../audit/audit-event.entity.js';
import { ResultEntity, RunEntity, TestCaseEntity } from '../results/entities.js';
import { UserEntity } from '../users/user.entity.js';

/** Every entity, listed explicitly: ES modules cannot be globbed from TypeScript sources under test. */
export const ENTITIES = [
  UserEntity,
  AuditEventEntity,
  ApiTokenEntity,
  ProjectEntity,
  ProjectMemberEntity,
  GroupEntity,
  GroupBindingEntity,
  GroupMemberEntity,
  InvitationEntity,
  RunEntity,
  TestCaseEntity,
  ResultEntity,
];
