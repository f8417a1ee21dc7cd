import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain Node script without declarations
import { anchorsOf, brokenLinks, linksOf, slugOf } from '../../tools/check-docs-links.mjs';

// `npm run lint:docs` (tools/check-docs-links.mjs) keeps the docs' links and anchors true
// when pages are split or headings renamed; its anchors must be the ones GitHub makes.

describe('slugOf: GitHub heading anchors', () => {
  it.each([
    ['The module', 'the-module'],
    ['`CircuitBreakerModule.forRoot(options?)`', 'circuitbreakermoduleforrootoptions'],
    [
      'Calls made through a client: fetch, `HttpService`, gRPC',
      'calls-made-through-a-client-fetch-httpservice-grpc',
    ],
    [
      'Breaker-aware retry: `withRetry(breaker, { attempts, backoff?, budget?, maxRetryAfterMs? })`',
      'breaker-aware-retry-withretrybreaker--attempts-backoff-budget-maxretryafterms-',
    ],
    ['Health checks (readiness, not liveness)', 'health-checks-readiness-not-liveness'],
    ['See [the engine](engine.md) now', 'see-the-engine-now'],
    ['snake_case and Ünïcode', 'snake_case-and-ünïcode'],
  ])('%s → #%s', (heading, slug) => {
    expect(slugOf(heading)).toBe(slug);
  });

  it('numbers repeated headings and reads explicit ids, ignoring code blocks', () => {
    const page = [
      '# Page',
      '## Options',
      '```md',
      '## Not a heading',
      '```',
      '## Options',
      '<a id="kept"></a>',
      '## Options #',
    ].join('\n');
    expect([...anchorsOf(page)]).toEqual(['page', 'options', 'options-1', 'kept', 'options-2']);
  });
});

describe('linksOf', () => {
  it('finds inline links, images, definitions and HTML targets, outside code', () => {
    const page = [
      'See [a](a.md#x "title"), ![b](b.png) and `[c](c.md)`.',
      '```',
      '[d](d.md)',
      '```',
      '[e]: e.md#y',
      '<img src="f.svg" alt="f">',
    ].join('\n');
    expect(linksOf(page)).toEqual([
      { target: 'a.md#x', line: 1 },
      { target: 'b.png', line: 1 },
      { target: 'e.md#y', line: 5 },
      { target: 'f.svg', line: 6 },
    ]);
  });
});

describe('brokenLinks', () => {
  let root: string;
  const write = (path: string, text: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'docs-links-'));
    write('bench/RESULTS.md', '# Results\n');
    write('docs/engine.md', '# The engine\n## Manual control\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('accepts links that lead somewhere, and GitHub links to files of this repository', () => {
    write(
      'docs/nest.md',
      [
        '# Nest',
        '## Per-key breakers',
        '[control](engine.md#manual-control), [here](#per-key-breakers), [home](../README.md), [docs](./)',
        '[results](https://github.com/nestjs-circuit-breaker/nestjs-circuit-breaker/blob/main/bench/RESULTS.md#results)',
        '[elsewhere](https://example.com/missing.md#nothing), [mail](mailto:someone@example.com)',
      ].join('\n'),
    );
    write('README.md', '# Readme\n[docs](docs/nest.md#nest)\n');
    expect(brokenLinks(root)).toEqual([]);
  });

  it('reports a missing file, a missing anchor and a missing file of a GitHub link, each with its line', () => {
    write(
      'docs/nest.md',
      [
        '# Nest',
        '[gone](testing.md)',
        '[renamed](engine.md#manual-controls)',
        '[moved](https://github.com/nestjs-circuit-breaker/nestjs-circuit-breaker/blob/main/bench/HTTP-RESULTS.md)',
        '[self](#nowhere)',
      ].join('\n'),
    );
    expect(brokenLinks(root)).toEqual([
      { page: 'docs/nest.md', line: 2, target: 'testing.md', problem: 'no file docs/testing.md' },
      {
        page: 'docs/nest.md',
        line: 3,
        target: 'engine.md#manual-controls',
        problem: 'no heading #manual-controls in docs/engine.md (near: #manual-control)',
      },
      {
        page: 'docs/nest.md',
        line: 4,
        target:
          'https://github.com/nestjs-circuit-breaker/nestjs-circuit-breaker/blob/main/bench/HTTP-RESULTS.md',
        problem: 'no file bench/HTTP-RESULTS.md',
      },
      {
        page: 'docs/nest.md',
        line: 5,
        target: '#nowhere',
        problem: 'no heading #nowhere in docs/nest.md',
      },
    ]);
  });
});
