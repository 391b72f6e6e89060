// The DataSource the TypeORM CLI uses (`npm run migration:generate|run|revert`), built from SVC_DB_URL.
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source-options.js';

const config = AppConfig.load(process.env, { devDefaults: true });
if (!config.db.url) {
  throw new Error('Set SVC_DB_URL to the database the migration commands should work on');
}
export default new DataSource(dataSourceOptions(config.db.url));
