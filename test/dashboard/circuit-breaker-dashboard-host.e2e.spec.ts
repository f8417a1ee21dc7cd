import { request } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CircuitBreakerModule, CircuitBreakerRegistry } from '../../lib/index.js';
import {
  CircuitBreakerDashboardModule,
  type CircuitBreakerDashboardOptions,
} from '../../lib/dashboard/index.js';
import {
  hostAllowed,
  originAllowed,
  parseAllowedHost,
  parseHost,
} from '../../lib/dashboard/dashboard-hosts.js';
import { HTTP_PLATFORMS, platformApps } from '../helpers/http-platforms.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** An answer as a raw client reads it: no fetch, which would not let a test choose `Host`. */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request over its own connection to 127.0.0.1, with the `Host` (and any header) the test forges. */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      // A stream answered 200 never ends by itself: its headers are the answer.
      if (res.statusCode === 200 && path.endsWith('/stream')) {
        resolve({ status: 200, headers: res.headers, body: '' });
        req.destroy();
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
      );
    });
    req.end(body);
  });
}

const messageOf = (answer: Answer) => (JSON.parse(answer.body) as { message: string }).message;

const refused = (host: string, port: number) =>
  `The circuit breaker dashboard does not answer to the host ${JSON.stringify(host)}. ` +
  `Open it as localhost:${port}, 127.0.0.1:${port}, [::1]:${port} or the address it is served on; ` +
  `for another name (a reverse proxy, a port mapping), add that name to the dashboard's allowedHosts option.`;

const CROSS_SITE =
  'The circuit breaker dashboard answers its own page (same origin) and a link to the page, nothing another site sends; behind a reverse proxy that rewrites Host, add the name the browser uses to allowedHosts.';

describe.each(HTTP_PLATFORMS)('the dashboard on %s checks Host and Origin', (platform) => {
  const start = platformApps(platform);
  async function dashboard(options: CircuitBreakerDashboardOptions) {
    const { app, url } = await start([
      CircuitBreakerModule.forRoot({ clock: new ManualClock(), breakers: { payments: {} } }),
      CircuitBreakerDashboardModule.forRoot(options),
    ]);
    const port = Number(new URL(url).port);
    const page = await send(port, 'GET', '/circuit-breakers', { host: `127.0.0.1:${port}` });
    const token = (
      JSON.parse(/id="cb-config">(.*?)<\/script>/.exec(page.body)![1]!) as { token: string }
    ).token;
    return { port, token, payments: app.get(CircuitBreakerRegistry).get('payments') };
  }
  const force = (port: number, token: string, headers: Record<string, string>) =>
    send(
      port,
      'POST',
      '/circuit-breakers/force',
      { 'content-type': 'application/json', 'x-circuit-breaker-dashboard': token, ...headers },
      JSON.stringify({ breaker: 'payments', state: 'open' }),
    );

  it('refuses a DNS-rebinding page (Host: evil.example:<port>) on the page, its state, its stream and its buttons', async () => {
    const { port, token, payments } = await dashboard({ control: true, guard: () => true });
    const evil = `evil.example:${port}`;
    for (const path of ['', '/state', '/stream']) {
      const answer = await send(port, 'GET', `/circuit-breakers${path}`, { host: evil });
      expect([path, answer.status, messageOf(answer)]).toEqual([path, 403, refused(evil, port)]);
    }
    // What the rebinding page sends: its own name as Host and as Origin, same-origin as the browser sees it.
    const answer = await force(port, token, {
      host: evil,
      origin: `http://${evil}`,
      'sec-fetch-site': 'same-origin',
    });
    expect([answer.status, messageOf(answer)]).toEqual([403, refused(evil, port)]);
    expect(payments.snapshot().forced).toBeUndefined();
  });

  it('answers localhost, 127/8 and [::1] with the served port by default, and nothing else', async () => {
    const { port, token, payments } = await dashboard({ control: true, guard: () => true });
    const status = async (host: string) =>
      (await send(port, 'GET', '/circuit-breakers/state', { host })).status;
    for (const host of ['localhost', 'LocalHost', '127.0.0.1', '127.1.2.3', '[::1]'])
      expect([host, await status(`${host}:${port}`)]).toEqual([host, 200]);
    for (const host of [
      `localhost:${port + 1}`,
      'localhost',
      `127.0.0.1.evil.example:${port}`,
      `evil@127.0.0.1:${port}`,
      `[::2]:${port}`,
      `128.0.0.1:${port}`,
      `localhost.:${port}`,
    ])
      expect([host, await status(host)]).toEqual([host, 403]);
    // HTTP/1.0 without Host: nothing to check it against.
    const bare = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.end('GET /circuit-breakers/state HTTP/1.0\r\n\r\n');
    });
    expect(bare).toMatch(/^HTTP\/1\.[01] 403 /);
    expect(
      (await force(port, token, { host: `localhost:${port}`, origin: `http://localhost:${port}` }))
        .status,
    ).toBe(204);
    expect(payments.snapshot().forced?.state).toBe('open');
  });

  it('sends nosniff and Cross-Origin-Resource-Policy on its refusals', async () => {
    const { port } = await dashboard({});
    const answers = [
      await send(port, 'GET', '/circuit-breakers/state', { host: '<b>x</b>' }),
      await send(port, 'GET', '/circuit-breakers/state', {
        host: `127.0.0.1:${port}`,
        origin: 'https://evil.example',
      }),
    ];
    expect(
      answers.map(({ status, headers }) => [
        status,
        headers['x-content-type-options'],
        headers['cross-origin-resource-policy'],
      ]),
    ).toEqual([
      [403, 'nosniff', 'same-origin'],
      [403, 'nosniff', 'same-origin'],
    ]);
  });

  it('sends X-Content-Type-Options: nosniff with the state and the stream', async () => {
    const { port } = await dashboard({});
    for (const path of ['/state', '/stream']) {
      const answer = await send(port, 'GET', `/circuit-breakers${path}`, {
        host: `127.0.0.1:${port}`,
      });
      expect([path, answer.status, answer.headers['x-content-type-options']]).toEqual([
        path,
        200,
        'nosniff',
      ]);
    }
  });

  it('answers the names of allowedHosts, with the port an entry gives', async () => {
    const { port } = await dashboard({
      allowedHosts: ['ops.example.com', '.internal.example', 'Mapped.Example:8080'],
    });
    const status = async (host: string) =>
      (await send(port, 'GET', '/circuit-breakers', { host })).status;
    const expected: [string, number][] = [
      ['ops.example.com', 200],
      ['ops.example.com:443', 200],
      ['internal.example', 200],
      ['a.b.internal.example:9000', 200],
      ['mapped.example:8080', 200],
      ['mapped.example', 403],
      ['notinternal.example', 403],
      ['ops.example.com.evil.example', 403],
    ];
    const seen: [string, number][] = [];
    for (const [host] of expected) seen.push([host, await status(host)]);
    expect(seen).toEqual(expected);
  });

  it('lets a proxy that rewrites Host through once the browser’s name is in allowedHosts, and only then', async () => {
    // nginx's default: Host becomes the upstream's address, the browser's Origin stays its own.
    const proxied = { 'sec-fetch-site': 'same-origin', origin: 'https://ops.example.com' };
    const closed = await dashboard({ control: true, guard: () => true });
    const refusedAnswer = await force(closed.port, closed.token, {
      ...proxied,
      host: `127.0.0.1:${closed.port}`,
    });
    expect([refusedAnswer.status, messageOf(refusedAnswer)]).toEqual([403, CROSS_SITE]);

    const open = await dashboard({
      control: true,
      guard: () => true,
      allowedHosts: ['ops.example.com'],
    });
    const answer = await force(open.port, open.token, {
      ...proxied,
      host: `127.0.0.1:${open.port}`,
    });
    expect(answer.status).toBe(204);
    expect(open.payments.snapshot().forced?.state).toBe('open');
    // Listed for the buttons, a name is not a way around the rest of the check.
    const other = await force(open.port, open.token, {
      ...proxied,
      origin: 'https://evil.example',
      host: `127.0.0.1:${open.port}`,
    });
    expect(other.status).toBe(403);
  });
});

describe('allowedHosts from forRootAsync()', () => {
  const start = platformApps('express');
  it("answers the names the factory lists, and fails start-up on the factory's wildcard", async () => {
    const dashboard = (allowedHosts: string[]) =>
      CircuitBreakerDashboardModule.forRootAsync({
        useFactory: () => ({ allowedHosts }),
      });
    const breakers = CircuitBreakerModule.forRoot({ breakers: { payments: {} } });
    const { url } = await start([breakers, dashboard(['ops.example.com'])]);
    const port = Number(new URL(url).port);
    for (const [host, status] of [
      ['ops.example.com', 200],
      [`evil.example:${port}`, 403],
    ] as const)
      expect((await send(port, 'GET', '/circuit-breakers/state', { host })).status).toBe(status);
    await expect(start([breakers, dashboard(['*'])])).rejects.toThrow(
      'option "allowedHosts[0]" would let any host name through',
    );
  });
});

describe('CircuitBreakerDashboardModule.forRoot({ allowedHosts })', () => {
  it('refuses what is not a host at start-up, naming the entry, and has no wildcard', () => {
    const forRoot = (allowedHosts: unknown) => () =>
      CircuitBreakerDashboardModule.forRoot({ allowedHosts } as CircuitBreakerDashboardOptions);
    expect(forRoot('ops.example.com')).toThrow(
      new TypeError(
        `CircuitBreakerDashboardModule: option "allowedHosts" must be an array of the host names the dashboard is reached by besides localhost and its address, e.g. ['ops.example.com'], got "ops.example.com".`,
      ),
    );
    expect(forRoot(['ok.example', '*'])).toThrow(
      new TypeError(
        `CircuitBreakerDashboardModule: option "allowedHosts[1]" would let any host name through, and with it a page that a DNS rebinding points at this machine. ` +
          `List the names your operators and your reverse proxy use instead, e.g. allowedHosts: ['ops.example.com'].`,
      ),
    );
    expect(forRoot(['https://ops.example.com/dashboard'])).toThrow(
      new TypeError(
        `CircuitBreakerDashboardModule: option "allowedHosts[0]" is a URL ("https://ops.example.com/dashboard"): give the host alone, 'ops.example.com'.`,
      ),
    );
    expect(forRoot(['ops.example.com:99999'])).toThrow(
      new TypeError(
        `CircuitBreakerDashboardModule: option "allowedHosts[0]" must be a host name with an optional port ('ops.example.com', 'ops.example.com:8443', '10.0.0.5:3000', '[fd00::1]:3000') ` +
          `or a domain with a leading dot, for it and its subdomains ('.example.com'), got "ops.example.com:99999".`,
      ),
    );
    expect(forRoot([42])).toThrow(/option "allowedHosts\[0\]" must be a host name .*, got 42\.$/);
  });
});

describe('hostAllowed() and originAllowed()', () => {
  const served = { address: '10.0.0.5', port: 3000, tls: false };
  it('answers the address a connection arrived at, with its port', () => {
    expect(hostAllowed(parseHost('10.0.0.5:3000')!, served, [])).toBe(true);
    expect(hostAllowed(parseHost('10.0.0.5:3001')!, served, [])).toBe(false);
    expect(hostAllowed(parseHost('10.0.0.6:3000')!, served, [])).toBe(false);
    expect(hostAllowed(parseHost('[fd00::5]:3000')!, { ...served, address: '[fd00::5]' }, [])).toBe(
      true,
    );
    // The default port of the scheme when Host has none.
    expect(hostAllowed(parseHost('localhost')!, { ...served, port: 80 }, [])).toBe(true);
    expect(hostAllowed(parseHost('localhost')!, { ...served, port: 443, tls: true }, [])).toBe(
      true,
    );
  });

  it("takes an Origin that is its Host's or listed, with the default port of the Origin's scheme", () => {
    const listed = ['ops.example.com:443', '.internal.example'].map((entry) =>
      parseAllowedHost(entry)!,
    );
    const cases: [string, string | undefined, boolean][] = [
      ['http://localhost:3000', 'localhost:3000', true],
      ['http://LOCALHOST:3000', 'LocalHost:3000', true],
      ['http://localhost:3001', 'localhost:3000', false],
      ['https://ops.example.com', '127.0.0.1:3000', true],
      ['https://ops.example.com:443', undefined, true],
      ['http://ops.example.com', '127.0.0.1:3000', false],
      ['https://a.internal.example:8443', '127.0.0.1:3000', true],
      ['null', 'localhost:3000', false],
      ['file:///etc/passwd', 'localhost:3000', false],
    ];
    expect(cases.map(([origin, host]) => originAllowed(origin, host, listed))).toEqual(
      cases.map(([, , expected]) => expected),
    );
  });

  it('refuses every name that is neither loopback nor listed, whatever its port (seed 2512)', () => {
    const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,8}[a-z0-9])?$/);
    const name = fc
      .array(label, { minLength: 1, maxLength: 4 })
      .map((labels) => labels.join('.'))
      .filter((text) => text !== 'localhost' && !/^127(\.\d+){3}$/.test(text));
    const allowed = ['ops.example.com', '.internal.example'].map((entry) =>
      parseAllowedHost(entry)!,
    );
    fc.assert(
      fc.property(name, fc.option(fc.integer({ min: 1, max: 65_535 })), (text, port) => {
        const host = parseHost(port === null ? text : `${text}:${port}`)!;
        const listed =
          text === 'ops.example.com' ||
          text === 'internal.example' ||
          text.endsWith('.internal.example');
        const local = text === '10.0.0.5' && (port ?? 80) === 3000;
        expect(hostAllowed(host, served, allowed)).toBe(listed || local);
        // Loopback names with the served port are always answered.
        expect(hostAllowed(parseHost(`localhost:3000`)!, served, allowed)).toBe(true);
      }),
      { seed: 2512, numRuns: 300 },
    );
  });
});
