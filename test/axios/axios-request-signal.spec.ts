import { describe, expect, it } from 'vitest';
import { RequestSignal } from '../../lib/axios/axios-request-signal.js';

describe('the signal a request goes out with (axios)', () => {
  it('tells onabort and every listener still added once, as an EventTarget does', () => {
    const signal = new RequestSignal();
    const heard: string[] = [];
    const reason = new Error('deadline');
    const first = (): void => void heard.push('first');
    // onabort itself is under test: a RequestSignal offers it as an AbortSignal does.
    // oxlint-disable-next-line unicorn/prefer-add-event-listener
    signal.onabort = function (event) {
      heard.push(`onabort ${this === signal} ${(event as { type: string }).type}`);
    };
    signal.addEventListener('abort', first);
    signal.addEventListener('abort', function (this: RequestSignal) {
      heard.push(`second ${this === signal} ${String(this.reason === reason)}`);
    });
    signal.addEventListener('abort', () => heard.push('third'));
    signal.removeEventListener('abort', first);
    signal.abort(reason);
    signal.abort(new Error('again'));
    expect(heard).toEqual(['onabort true abort', 'second true true', 'third']);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
    expect(() => signal.throwIfAborted()).toThrow(reason);
  });

  it('does not abort a request that has settled', () => {
    const signal = new RequestSignal();
    let heard = 0;
    signal.addEventListener('abort', () => heard++);
    signal.settled = true;
    signal.abort(new Error('late'));
    expect({ heard, aborted: signal.aborted }).toEqual({ heard: 0, aborted: false });
    expect(() => signal.throwIfAborted()).not.toThrow();
  });
});
