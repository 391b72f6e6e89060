import { CreateRunDto } from '../results/dto/results.dto.js';
import { CreateProjectDto } from '../access/dto/project.dto.js';
import { createValidationPipe, droppedKey, prototypeKey } from './validation.js';

const body = (metatype: new () => object) => ({ type: 'body' as const, metatype });

describe('createValidationPipe', () => {
  const sut = createValidationPipe();

  it.each([
    'constructor',
    '__proto__',
    'prototype',
    'toString',
    'hasOwnProperty',
    'valueOf',
    'isPrototypeOf',
  ])('refuses an unknown field named %s like any other unknown field', async (name) => {
    const value = JSON.parse(`{"key":"WEB","name":"Web","${name}":"x"}`);
    await expect(sut.transform(value, body(CreateProjectDto))).rejects.toThrow(
      `property ${name} should not exist`,
    );
  });

  it('keeps every key of a free-form map as sent, in an object without a prototype', async () => {
    const value = JSON.parse(
      '{"name":"r","attributes":{"env":"ci","toString":"x","constructor":"y","__proto__":"p"}}',
    );
    const dto = (await sut.transform(value, body(CreateRunDto))) as CreateRunDto;
    expect(Object.getPrototypeOf(dto.attributes)).toBeNull();
    expect(JSON.parse(JSON.stringify(dto.attributes))).toEqual(
      JSON.parse('{"env":"ci","toString":"x","constructor":"y","__proto__":"p"}'),
    );
  });

  it.each([
    ['{"a":1}', 'attributes must be an object'],
    ['{"constructor":{"x":[1]}}', 'attributes must be an object'],
    ['{"a":{"constructor":"y"}}', 'property attributes.a.constructor should not exist'],
    ['{"__proto__":{"admin":true}}', 'attributes must be an object'],
  ])('refuses the map %s with 400, never a crash', async (attributes, message) => {
    const value = JSON.parse(`{"name":"r","attributes":${attributes}}`);
    await expect(sut.transform(value, body(CreateRunDto))).rejects.toThrow(message);
  });
});

describe('prototypeKey and droppedKey', () => {
  it('name the path of the key', () => {
    expect(prototypeKey(JSON.parse('{"a":[{"b":{"__proto__":1}}]}'))).toBe('a.0.b.__proto__');
    expect(prototypeKey({ attributes: { constructor: 'x' } })).toBeUndefined();
    expect(droppedKey({ a: [{ b: 1, c: 2 }] }, { a: [{ b: 1 }] })).toBe('a.0.c');
    expect(droppedKey({ a: 1 }, { a: 1, b: 2 })).toBeUndefined();
  });
});
