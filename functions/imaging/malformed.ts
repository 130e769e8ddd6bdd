/** A picture whose container cannot be walked whole, or whose decoder refused it: the caller answers 415. */
export class MalformedImageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedImageError';
  }
}
