import { SharpImageProcessor } from '../../../functions/imaging/sharp-image-processor';
import { makePhoto, SERVICE_IMAGING } from '../../support/images';

/** A promise that knows whether anything waits on it yet. */
class Watched<T> extends Promise<T> {
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  waitedOn = false;

  override then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    this.waitedOn = true;
    return super.then(onFulfilled, onRejected);
  }
}

describe('renditions that fail while the hashes are made', () => {
  it('fail the upload, and were waited on when they failed: no unhandled rejection, which ends the process', async () => {
    let waitedOnWhenFailed: boolean | undefined;
    // the renditions fail a turn of the event loop after they start, while the hashes are made (one a turn)
    const renditions = jest
      .spyOn(SharpImageProcessor.prototype as unknown as { renditions: () => Promise<never> }, 'renditions')
      .mockImplementation(() => {
        const failing: Watched<never> = new Watched((_resolve, reject) =>
          setImmediate(() => {
            waitedOnWhenFailed = failing.waitedOn;
            reject(new Error('the renditions failed'));
          }),
        );
        return failing;
      });
    try {
      const failed: unknown = await new SharpImageProcessor(SERVICE_IMAGING)
        .process(await makePhoto(3, 320, 240), { targetWidth: undefined })
        .catch((error: unknown) => error);
      expect(failed).toMatchObject({ kind: 'UnsupportedFormat', cause: { message: 'the renditions failed' } });
    } finally {
      renditions.mockRestore();
    }
    expect(waitedOnWhenFailed).toBe(true);
  });
});
