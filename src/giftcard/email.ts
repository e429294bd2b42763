/**
 * A likely misspelt e-mail domain (bob@exmaple.com), found with @zootools/email-spell-checker (a
 * maintained fork of mailcheck): its list of common mail domains and TLDs, plus example.com, the
 * domain of the sandbox and the docs.
 */
import { POPULAR_DOMAINS, POPULAR_TLDS, run } from '@zootools/email-spell-checker';

const DOMAINS = [...POPULAR_DOMAINS, 'example.com'];

/** The address the customer probably meant, or undefined when the domain looks right. */
export function suggestEmail(email: string): string | undefined {
  const domain = email.split('@').pop()?.toLowerCase();
  if (!domain || DOMAINS.includes(domain)) return undefined;
  const suggestion = run({ email, domains: DOMAINS, topLevelDomains: POPULAR_TLDS });
  return suggestion && suggestion.full.toLowerCase() !== email.toLowerCase() ? suggestion.full : undefined;
}
