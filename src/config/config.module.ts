import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from './app-config.js';

/** Hands the one validated AppConfig to every module. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: AppConfig, useValue: config }], exports: [AppConfig] };
  }
}
