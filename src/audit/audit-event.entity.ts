import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity('audit_events')
@Index('ix_audit_events_at', ['at'])
@Index('ix_audit_events_type_at', ['type', 'at'])
@Index('ix_audit_events_actor_at', ['actorId', 'at'])
export class AuditEventEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  at: Date;

  @Column({ type: 'varchar', length: 64 })
  type: string;

  @Column({ name: 'actor_id', type: 'bigint', nullable: true })
  actorId: string | null;

  @Column({ name: 'actor_email', type: 'varchar', length: 320, nullable: true })
  actorEmail: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  ip: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  target: string | null;

  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" })
  details: Record<string, unknown>;

  /** Set on events that repeat (rate-limit hits): one row per key, its count kept in `details`. */
  @Column({ name: 'aggregate_key', type: 'varchar', length: 600, nullable: true, unique: true })
  aggregateKey: string | null;
}
