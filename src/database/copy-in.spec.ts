import { copyField, CopyText } from './copy-in.js';

describe('CopyText', () => {
  it('keeps every line, in order, in chunks that stay under V8’s large-object size', () => {
    const text = new CopyText();
    const lines = Array.from(
      { length: 1000 },
      (_, i) => `${i}\t${copyField(`name ${i}\twith a tab`)}\t${'é'.repeat(i % 300)}\n`,
    );
    lines.forEach((line) => text.add(line));
    const chunks = text.done();

    expect(Buffer.concat(chunks).toString()).toBe(lines.join(''));
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      // 32K characters and the line that crossed it; é is two bytes, as each character of a two-byte string is.
      expect(chunk.toString().length).toBeLessThan(32_768 + 400);
    }
  });

  it('gives one chunk for a few lines and none for none', () => {
    const text = new CopyText();
    text.add('1\ta\n');
    text.add('2\tb\n');
    expect(text.done().map(String)).toEqual(['1\ta\n2\tb\n']);
    expect(new CopyText().done()).toEqual([]);
  });
});

describe('copyField', () => {
  it('escapes what COPY’s text format reads specially and writes null as \\N', () => {
    expect(copyField('a\\b\tc\nd\re')).toBe('a\\\\b\\tc\\nd\\re');
    expect(copyField(undefined)).toBe('\\N');
    expect(copyField(null)).toBe('\\N');
    expect(copyField(42)).toBe('42');
    expect(copyField('plain')).toBe('plain');
  });
});
