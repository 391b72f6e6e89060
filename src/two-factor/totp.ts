import { generateSecret, generateURI, verify } from 'otplib';

/** RFC 6238 as every authenticator app implements it: HMAC-SHA-1, 6 digits, 30-second steps. */
export const TOTP_PERIOD_SECONDS = 30;
/** Codes of the step before and after the current one are accepted too (clock drift, typing time). */
export const TOTP_DRIFT_STEPS = 1;
/** 160 bits, RFC 4226's recommended secret length; 32 base32 characters. */
const SECRET_BYTES = 20;

/** Milliseconds since the epoch; tests pass a fake one. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export type TotpCheck =
  { valid: true; step: number } | { valid: false; reason: 'WRONG_CODE' | 'REPLAYED_CODE' };

/** Time-based one-time codes on otplib, with the window and replay rules of this service. */
export class Totp {
  constructor(private readonly clock: Clock = systemClock) {}

  newSecret(): string {
    return generateSecret({ length: SECRET_BYTES });
  }

  /** The otpauth:// URL authenticator apps read from the QR code. */
  uri(secret: string, issuer: string, account: string): string {
    return generateURI({
      issuer,
      label: account,
      secret,
      algorithm: 'sha1',
      digits: 6,
      period: TOTP_PERIOD_SECONDS,
    });
  }

  /**
   * Whether `code` is the code of the current time step or one step either side, and of a step after
   * `lastUsedStep` (a code accepted once is never accepted again, nor is any older code).
   */
  async check(secret: string, code: string, lastUsedStep: number | null): Promise<TotpCheck> {
    if (!/^\d{6}$/.test(code)) {
      return { valid: false, reason: 'WRONG_CODE' };
    }
    const result = await verify({
      secret,
      token: code,
      epoch: Math.floor(this.clock.now() / 1000),
      period: TOTP_PERIOD_SECONDS,
      // Seconds either side of now: exactly one step before and after, wherever in the step we are.
      epochTolerance: TOTP_DRIFT_STEPS * TOTP_PERIOD_SECONDS,
    });
    // The functional API's result type covers HOTP too; a TOTP match carries its time step.
    if (!result.valid || !('timeStep' in result)) {
      return { valid: false, reason: 'WRONG_CODE' };
    }
    if (lastUsedStep !== null && result.timeStep <= lastUsedStep) {
      return { valid: false, reason: 'REPLAYED_CODE' };
    }
    return { valid: true, step: result.timeStep };
  }
}
