export function unloadedP99(seed: number): Promise<number>;
