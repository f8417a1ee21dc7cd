/** Settles every pending promise callback. */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
