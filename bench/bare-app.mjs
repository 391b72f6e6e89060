// The baseline for the HTTP benchmarks: a NestJS app on the same adapter (@nestjs/platform-express) as the
// service, with one route that returns {} and does nothing else — no middleware, guards, pipes or logging.
// Plain JavaScript with Nest's decorators applied by hand, so it runs without a compile step.
//   PORT=8081 node bench/bare-app.mjs   →   GET /bare  →  200 {}
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';

class BareController {
  bare() {
    return {};
  }
}
Reflect.decorate([Controller('bare')], BareController);
Reflect.decorate(
  [Get()],
  BareController.prototype,
  'bare',
  Object.getOwnPropertyDescriptor(BareController.prototype, 'bare'),
);

class BareModule {}
Reflect.decorate([Module({ controllers: [BareController] })], BareModule);

const port = Number(process.env.PORT ?? 8081);
const app = await NestFactory.create(BareModule, new ExpressAdapter(), { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(port, '127.0.0.1');
// The parent waits for this line (or polls the route) before measuring.
console.log(`bare-app listening on http://127.0.0.1:${port}/bare`);
