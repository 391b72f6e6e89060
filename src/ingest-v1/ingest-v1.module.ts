import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { ResultsModule } from '../results/results.module.js';
import { RunsV1Controller } from './runs-v1.controller.js';

@Module({ imports: [AccessModule, ResultsModule], controllers: [RunsV1Controller] })
export class IngestV1Module {}
