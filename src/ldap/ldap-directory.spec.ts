import { escapeFilterValue, fillFilter } from './ldap-directory.js';

describe('LDAP filter values (RFC 4515)', () => {
  it('escapes every character that could widen or end a filter', () => {
    expect(escapeFilterValue('*')).toBe('\\2a');
    expect(escapeFilterValue('*)(uid=*')).toBe('\\2a\\29\\28uid=\\2a');
    expect(escapeFilterValue('a\\b')).toBe('a\\5cb');
    expect(escapeFilterValue('nul\0')).toBe('nul\\00');
    expect(escapeFilterValue('Jörg Müller')).toBe('Jörg Müller');
  });

  it('fills every {0} of a template, with a DN escaped as a value', () => {
    expect(fillFilter('(|(uid={0})(mail={0}))', 'a*')).toBe('(|(uid=a\\2a)(mail=a\\2a))');
    expect(fillFilter('(member={0})', 'cn=Smith\\, J (Ops*),ou=people,dc=example,dc=org')).toBe(
      '(member=cn=Smith\\5c, J \\28Ops\\2a\\29,ou=people,dc=example,dc=org)',
    );
  });
});
