import 'reflect-metadata';
import { setFlagsFromString } from 'node:v8';
import { Logger } from '@nestjs/common';
import { createApp, createLogger } from './app.factory.js';
import { AppConfig, ConfigError } from './config/app-config.js';
import { describeParts } from './config/parts.js';

// V8's allocation-site pretenuring saw the results of an import (and the lines of its COPY text) live just long
// enough to survive two young collections, and from then on allocated them straight into the old generation,
// where they piled up as garbage until a full collection: +70 MB of resident memory for a 50 MB report. This
// service's allocations are per request and short-lived. V8 reads the flag at each collection, so setting it
// here, before any work, takes effect (unlike the heap's sizes: see the start scripts' --max-semi-space-size).
setFlagsFromString('--no-allocation-site-pretenuring');

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = AppConfig.load(process.env, { devDefaults: process.argv.includes('--dev-defaults') });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config);
  Logger.overrideLogger(logger);
  const log = new Logger('Boot');
  for (const line of describeParts(config)) {
    log.log(line.text);
    if (line.warn) {
      log.warn(line.warn);
    }
  }
  for (const file of config.generated) {
    log.log(`Generated and stored ${file}`);
  }
  const app = await createApp(config, { logger });
  await app.listen(config.http.port);
  log.log(`Listening on ${config.http.baseUrl} (API reference: ${config.http.baseUrl}/swagger-ui.html)`);
  if (config.bootstrapAdmin) {
    const where = config.bootstrapAdmin.passwordFile
      ? `password in ${config.bootstrapAdmin.passwordFile}`
      : 'password from SVC_BOOTSTRAP_ADMIN_PASSWORD';
    log.log(`Bootstrap administrator: ${config.bootstrapAdmin.email} (${where})`);
  }
}

main().catch((error: unknown) => {
  console.error('The service failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
