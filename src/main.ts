import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp, createLogger } from './app.factory.js';
import { AppConfig, ConfigError } from './config/app-config.js';
import { describeParts } from './config/parts.js';

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
