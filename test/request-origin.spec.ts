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

  it('keys an http(s) URL by the part before its path as the URL parser keys the whole URL', () => {
    for (const url of [
      'HTTP://API.Example.COM/v1',
      'https://user:p%40ss@api.example.com:8443/v1?q=1#f',
      'http://api.example.com\\path',
      'http://api.example.com?x=1',
      'http://api.example.com#top',
      'http://api.exa\tmple.com/x',
      'https://[::1]:443/x',
      'http://api.example.com./x',
      'http://0x7f.1/x',
    ]) {
      const parsed = originKeyOf(new URL(url));
      expect(requestOrigin({ url } as InternalAxiosRequestConfig)).toBe(parsed);
    }
    // What the URL parser refuses is its own key, as before.
    for (const url of ['http://api.example.com:99999/x', 'http://[bad/x', 'http:///x'])
      expect(requestOrigin({ url } as InternalAxiosRequestConfig)).toBe(
        url === 'http:///x' ? 'http://x:80' : url,
      );
  });

  it('keys a URL relative to an http(s) base by the base, as the URL parser keys them joined', () => {
    const joined = (baseURL: string, url: string): string | undefined =>
      originKeyOf(new URL(url === '' ? baseURL : `${baseURL.replace(/\/+$/, '')}/${url}`));
    for (const [baseURL, url] of [
      ['https://api.example.com/v1/', 'items'],
      ['https://api.example.com/v1/', '//other.example.com/x'],
      ['HTTP://User@API.example.com:8080', '?q=1'],
      ['http://api.example.com\\v1', 'x'],
      ['http://api.example.com', ''],
      ['http://api.example.com', 'http://other.example.com/x'],
    ] as const) {
      const config = { baseURL, url, allowAbsoluteUrls: false } as InternalAxiosRequestConfig;
      // Twice: the second comes from the last base's key.
      expect(requestOrigin(config)).toBe(joined(baseURL, url.replace(/^\/+/, '')));
      expect(requestOrigin(config)).toBe(joined(baseURL, url.replace(/^\/+/, '')));
    }
    // An absolute URL goes where it says, unless absolute URLs are not allowed.
    const absolute = { baseURL: 'https://api.example.com', url: 'http://other.example.com/x' };
    expect(requestOrigin(absolute as InternalAxiosRequestConfig)).toBe(
      'http://other.example.com:80',
    );
    // A base the URL parser refuses: the joined URL is its own key, as before.
    expect(
      requestOrigin({
        baseURL: 'http://api.example.com:99999/',
        url: '/x',
      } as InternalAxiosRequestConfig),
    ).toBe('http://api.example.com:99999/x');
  });
});
