/** What to tell a person about something thrown: the message of an Error, else the value as text. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
