import axios, { type InternalAxiosRequestConfig } from 'axios';
import { describe, expect, it } from 'vitest';
import { callerSignalOf } from '../../lib/axios/axios-caller-signal.js';

function configWith(fields: Partial<InternalAxiosRequestConfig>): InternalAxiosRequestConfig {
  return { headers: new axios.AxiosHeaders(), ...fields } as InternalAxiosRequestConfig;
}

describe('the caller signal of an axios request', () => {
  it('tells every listener still added once, in order, when the token is cancelled', async () => {
    const source = axios.CancelToken.source();
    const caller = callerSignalOf(configWith({ cancelToken: source.token }))!;
    const heard: string[] = [];
    const first = (): void => void heard.push('first');
    caller.signal.addEventListener('abort', first);
    caller.signal.addEventListener('abort', () => heard.push('second'));
    caller.signal.addEventListener('abort', () => heard.push('third'));
    caller.signal.removeEventListener('abort', first);
    source.cancel('gone');
    source.cancel('again');
    // The token tells its listeners once its promise settles.
    await source.token.promise;
    expect(heard).toEqual(['second', 'third']);
    expect(caller.signal.aborted).toBe(true);
    expect((caller.signal.reason as { message?: string }).message).toBe('gone');
  });

  it('follows a signal and a token, and stops listening to both once disposed', async () => {
    const controller = new AbortController();
    const source = axios.CancelToken.source();
    const caller = callerSignalOf(
      configWith({ signal: controller.signal, cancelToken: source.token }),
    )!;
    let heard = 0;
    caller.signal.addEventListener('abort', () => heard++);
    caller.dispose();
    controller.abort(new Error('late'));
    source.cancel('late');
    await source.token.promise;
    expect(heard).toBe(0);
    expect(caller.signal.aborted).toBe(false);
  });

  it('is aborted at once by a signal aborted already, with its reason', () => {
    const controller = new AbortController();
    const reason = new Error('before');
    controller.abort(reason);
    const caller = callerSignalOf(
      configWith({ signal: controller.signal, cancelToken: axios.CancelToken.source().token }),
    )!;
    expect(caller.signal.aborted).toBe(true);
    expect(caller.signal.reason).toBe(reason);
  });
});
