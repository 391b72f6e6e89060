/** The run attributes that hold a link to the CI build, first found first. */
export const CI_ATTRIBUTES = ['ci', 'build_url'] as const;

/** The CI build's address among a run's attributes: an http(s) URL only (never `javascript:` or the like). */
export function ciLink(attributes: Record<string, string>): string | undefined {
  for (const key of CI_ATTRIBUTES) {
    const value = attributes[key]?.trim();
    if (!value) {
      continue;
    }
    try {
      const url = new URL(value);
      if (url.protocol === 'http:' || url.protocol === 'https:') {
        return url.href;
      }
    } catch {
      // Not a URL: shown as an attribute, not as a link.
    }
  }
  return undefined;
}

/** A link to the run's CI build, opening in a new tab, when its attributes name one. */
export function CiLink({ attributes, name }: { attributes: Record<string, string>; name: string }) {
  const href = ciLink(attributes);
  return href ? (
    <a href={href} target="_blank" rel="noopener noreferrer" className="ci-link">
      CI build<span className="visually-hidden">, of {name}, opens in a new tab</span>
    </a>
  ) : null;
}
