import { validateSync } from 'class-validator';
import { NoFormatCharacters } from './formats.js';
import { codePointOf, formatCharacterIn, stripFormatCharacters } from './text.js';

/** Invisible format characters (Unicode Cf), as names have carried them to mislead. */
const FORMAT_CHARACTERS = [
  '\u202E', // RIGHT-TO-LEFT OVERRIDE: "report\u202Egnp.exe" shows as "reportexe.png"
  '\u202A',
  '\u202D',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200B',
  '\u200C',
  '\u200D', // ZERO WIDTH JOINER, outside an emoji sequence
  '\u200E',
  '\u200F',
  '\u2060',
  '\uFEFF',
  '\u061C',
  '\u00AD',
  '\u{E0041}', // TAG LATIN CAPITAL LETTER A: hidden text
];

describe('invisible format characters in names', () => {
  it.each(FORMAT_CHARACTERS.map((char) => [codePointOf(char), char]))('finds and strips %s', (_, char) => {
    const name = `report${char}gnp.exe`;
    expect(formatCharacterIn(name)).toBe(char);
    expect(stripFormatCharacters(name)).toBe('reportgnp.exe');
    expect(stripFormatCharacters(`${char}${char}a${char}`)).toBe('a');
  });

  it('keeps a zero width joiner inside an emoji sequence, and everything else as it is', () => {
    for (const name of [
      '👩‍💻 Dev tools',
      'Team 👩🏽‍💻',
      '❤️‍🔥 hot path',
      '🏳️‍🌈',
      'Ünïcödé 名前 اسم',
      'a\u00A0b',
      'e\u0301',
    ]) {
      expect(formatCharacterIn(name)).toBeUndefined();
      expect(stripFormatCharacters(name)).toBe(name);
    }
    // A joiner next to only one emoji joins nothing.
    expect(stripFormatCharacters('👩\u200Dx')).toBe('👩x');
    expect(stripFormatCharacters('x\u200D💻')).toBe('x💻');
    expect(formatCharacterIn('👩‍💻\u202E')).toBe('\u202E');
  });

  it('names the character as a code point', () => {
    expect(codePointOf('\u202E')).toBe('U+202E');
    expect(codePointOf('\u00AD')).toBe('U+00AD');
    expect(codePointOf('\u{E0041}')).toBe('U+E0041');
  });

  it('refuses them in a decorated field, naming the field and the character', () => {
    class Named {
      @NoFormatCharacters()
      name: unknown;
    }
    const errorsOf = (name: unknown) => validateSync(Object.assign(new Named(), { name }));
    expect(errorsOf('Web\u2066app')[0].constraints).toEqual({
      noFormatCharacters: 'name must not contain invisible formatting characters (it holds U+2066)',
    });
    expect(errorsOf('👩‍💻 Web app')).toEqual([]);
    // Other types are for the field's type check to refuse.
    expect(errorsOf(42)).toEqual([]);
  });
});
