import { detectFormat } from './detect.js';
import {
  cutChars,
  secondsToMs,
  splitQualifiedName,
  timeSpanToMs,
  toTimestamp,
  trimBlankLines,
} from './report-fields.js';

describe('report fields', () => {
  it.each([
    ['abc', 5, 'abc'],
    ['abcdef', 3, 'abc'],
    ['a😀b', 2, 'a😀'],
    ['😀😀😀', 2, '😀😀'],
    ['a\uD800b', 2, 'a\uD800'],
  ])('cutChars(%j, %d) counts code points as PostgreSQL does', (value, max, cut) => {
    expect(cutChars(value, max)).toBe(cut);
  });

  it.each([
    ['0.123', 123],
    ['1,5', 1500],
    ['1,234.5', 1_234_500],
    ['2', 2000],
    ['', NaN],
    [undefined, NaN],
    ['-1', NaN],
    ['abc', NaN],
  ])('secondsToMs(%j) is %d', (text, ms) => {
    expect(secondsToMs(text)).toBe(ms);
  });

  it.each([
    ['00:00:01.2345678', 1235],
    ['01:02:03', 3_723_000],
    ['1.00:00:00', 86_400_000],
    ['12.5', NaN],
  ])('timeSpanToMs(%j) is %d', (text, ms) => {
    expect(timeSpanToMs(text)).toBe(ms);
  });

  it.each([
    ['Ns.Class.Method', ['Ns.Class', 'Method']],
    ['Ns.Class.Method(a: 1.5, b: "x.y")', ['Ns.Class', 'Method(a: 1.5, b: "x.y")']],
    ['Method', undefined],
    ['Method (Data Row 0)', undefined],
    ['My display name with a.dot', undefined],
    ['.Method', undefined],
    ['Ns.', undefined],
  ])('splitQualifiedName(%j)', (full, split) => {
    expect(splitQualifiedName(full)).toEqual(split);
  });

  it.each([
    ['2025-03-01T10:00:00Z', '2025-03-01T10:00:00Z'],
    ['2025-03-01 10:00:00Z', '2025-03-01T10:00:00Z'],
    ['2025-03-01T10:00:00.1234567+01:00', '2025-03-01T10:00:00.1234567+01:00'],
    ['2025-03-01T10:00:00 UTC', '2025-03-01T10:00:00Z'],
    ['Sat, 01 Mar 2025 10:00:00 GMT', '2025-03-01T10:00:00.000Z'],
    ['2025-03-01T10:00:00', undefined],
    ['2025-03-01T10:00:00 IST', undefined],
    ['03/01/2025 10:00:00', undefined],
  ])('toTimestamp(%j) is %j', (text, timestamp) => {
    expect(toTimestamp(text)).toBe(timestamp);
  });

  it.each([
    ['\n   \n  at x\n  at y  \n', '  at x\n  at y'],
    ['  same', '  same'],
    [' \n\t\n', ''],
  ])('trimBlankLines(%j)', (text, trimmed) => {
    expect(trimBlankLines(text)).toBe(trimmed);
  });
});

describe(detectFormat.name, () => {
  it.each([
    ['<?xml version="1.0"?><!-- c --><testsuites>', 'junit'],
    ['\uFEFF<testsuite name="x">', 'junit'],
    ['<t:TestRun xmlns:t="http://microsoft.com/schemas/VisualStudio/TeamTest/2010">', 'trx'],
    ['<TestRun id="1">', undefined],
    ['<test-results total="1">', 'nunit'],
    ['<test-run id="2">', 'nunit'],
    ['<assembly name="a">', 'xunit'],
    ['<testng-results>', 'testng'],
    ['<html>', undefined],
    ['{"reportFormat":"CTRF","results":', 'ctrf'],
    ['{"results":{"tool":{"name":"x"},"summary":{},"tests":[', 'ctrf'],
    ['{"results":{"tool":{"name":"x"}}}', undefined],
    ['[{"description":"","elements":[', 'cucumber'],
    ['[{"keyword":"Feature","uri":"a.feature"', 'cucumber'],
    ['[]', 'cucumber'],
    ['[1,2]', undefined],
    ['{"a":', undefined],
    ['hello', undefined],
  ])('detects %j as %s', (head, format) => {
    expect(detectFormat(Buffer.from(head))).toBe(format);
  });
});
