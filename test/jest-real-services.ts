// Integration and end-to-end tests run against real PostgreSQL, Redis, RabbitMQ, SMTP and LDAP, and several wait
// on purpose (for a mail that must not come, a lease to end): Jest's 5 s default per test cut one off on a busy CI
// machine. (A project's `testTimeout` in jest.config.js is not honoured by jest-circus; jest.setTimeout is.)
import { jest } from '@jest/globals';

jest.setTimeout(30_000);
