import { createSecretKey, KeyObject } from 'node:crypto';
import type { AppConfig } from '../config/app-config.js';

const keys = new WeakMap<AppConfig, KeyObject>();

/** The HS256 key as a KeyObject, made once per configuration. */
export function jwtKey(config: AppConfig): KeyObject {
  let key = keys.get(config);
  if (!key) {
    key = createSecretKey(Buffer.from(config.auth.jwtSecret, 'utf8'));
    keys.set(config, key);
  }
  return key;
}
