import type { InternalAxiosRequestConfig } from 'axios';
import { describe, expect, it } from 'vitest';
import { requestOrigin } from '../lib/axios/axios-request-origin.js';
import { originKeyOf } from '../lib/request-origin.js';

describe('the origin key of the HTTP clients', () => {
  it('writes the port always, so that one target has one child whichever client calls it', () => {
    for (const [url, key] of [
      ['https://api.example.com/v1/items', 'https://api.example.com:443'],
      ['https://api.example.com:443/v1', 'https://api.example.com:443'],
      ['http://api.example.com', 'http://api.example.com:80'],
      ['http://127.0.0.1:8080/x?y=1', 'http://127.0.0.1:8080'],
    ] as const) {
      expect(originKeyOf(url)).toBe(key);
      expect(requestOrigin({ url } as InternalAxiosRequestConfig)).toBe(key);
    }
    expect(originKeyOf('not a url')).toBeUndefined();
    expect(
      requestOrigin({
        baseURL: 'https://api.example.com/v1/',
        url: 'items',
      } as InternalAxiosRequestConfig),
    ).toBe('https://api.example.com:443');
  });
});
