/** A body without HTML comments (PR templates keep their guidance in them). */
export function stripHtmlComments(text: string): string {
  return text.replace(/<!--[\s\S]*?(?:-->|$)/g, ' ');
}
