/** "must not be empty" → "Must not be empty": messages shown alone under a field. */
export function sentence(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}
