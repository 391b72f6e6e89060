// Evaluates NestJS's ES modules before any test file's import graph is linked: CommonJS packages such as
// @nestjs/passport `require()` them, and Jest refuses a require(esm) of a module that is still being linked.
import '@nestjs/common';
import '@nestjs/core';
