/** A refusal of an operator's command: told as is, and the command exits non-zero. */
export class AdminError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'AdminError';
  }
}
