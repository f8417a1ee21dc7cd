/** A protected call that rejects with `error`. */
export const fail =
  (error: unknown = new Error('boom')) =>
  () =>
    Promise.reject(error);

/** A protected call that resolves with `value`. */
export const succeed =
  <T>(value: T) =>
  () =>
    Promise.resolve(value);
