/** An answer's body as the HTTP client reads it: JSON when the content type says so and it parses, else the text. */
export function readBody(text: string, headers: Record<string, string>): unknown {
  if (!text || !/json/i.test(headers['content-type'] ?? '')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
