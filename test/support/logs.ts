import type { LoggerService, LogLevel } from '@nestjs/common';

export interface LogLine {
  level: LogLevel;
  context?: string;
  message: string;
  /** A stack trace passed with the line (Nest's `error(message, stack)`), if any. */
  stack?: string;
}

/**
 * A logger that keeps every line the service writes, at every level, for tests that assert what is logged (and at
 * which level): pass it as `startApp(env, { logger })`.
 */
export class CapturedLogs implements LoggerService {
  readonly lines: LogLine[] = [];

  log(message: unknown, ...rest: unknown[]): void {
    this.add('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.add('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.add('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.add('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.add('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.add('fatal', message, rest);
  }

  /** Lines at `levels` (all when none are named). */
  at(...levels: LogLevel[]): LogLine[] {
    return this.lines.filter((l) => levels.length === 0 || levels.includes(l.level));
  }

  /** Every line as `LEVEL [context] message` (and its stack), for a failing expectation's message. */
  text(): string {
    return this.lines
      .map(
        (l) => `${l.level.toUpperCase()} [${l.context ?? ''}] ${l.message}${l.stack ? `\n${l.stack}` : ''}`,
      )
      .join('\n');
  }

  private add(level: LogLevel, message: unknown, rest: unknown[]): void {
    // Nest passes (message, context) or, for errors, (message, stack, context).
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const stack = level === 'error' && rest.length > 1 && typeof rest[0] === 'string' ? rest[0] : undefined;
    const text = message instanceof Error ? (message.stack ?? message.message) : String(message);
    this.lines.push({ level, context, message: text, stack });
  }
}
