import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// `npm run api:check` is what keeps an unreviewed change of the public surface out of
// CI: these run the real tool (tools/api-report.mjs) on a small package of two entry
// points, and change its declarations as a careless commit would.

const tool = fileURLToPath(new URL('../../tools/api-report.mjs', import.meta.url));

const ROOT_DTS = `/** Options of a gate. */
export interface GateOptions {
    limit: number;
}
export declare class Gate {
    constructor(name: string, options?: GateOptions);
    open(): void;
}
export declare function gate(name: string): Gate;
`;
const EXTRA_DTS = `export declare const EXTRA_LIMIT = 3;
`;

let folder: string;

function write(path: string, text: string): void {
  mkdirSync(join(folder, path, '..'), { recursive: true });
  writeFileSync(join(folder, path), text);
}

function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [tool, '--project', folder, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const report = (name: string) => readFileSync(join(folder, 'api', `${name}.api.md`), 'utf8');

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'api-report-spec-'));
  write(
    'package.json',
    JSON.stringify({
      name: 'gate-pkg',
      type: 'module',
      exports: {
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        './extra': { types: './dist/extra/index.d.ts', default: './dist/extra/index.js' },
        './package.json': './package.json',
      },
    }),
  );
  write('dist/index.d.ts', ROOT_DTS);
  write('dist/extra/index.d.ts', EXTRA_DTS);
});

afterEach(() => rmSync(folder, { recursive: true, force: true }));

describe('tools/api-report.mjs', () => {
  it('writes one report per entry point with every signature; fails on a changed one, printing it', () => {
    const update = run('--update');
    expect(update.status).toBe(0);
    expect(update.stdout).toContain('updated .                    3 names  api/root.api.md');
    expect(update.stdout).toContain('updated ./extra              1 names  api/extra.api.md');
    const root = report('root');
    expect(root).toContain('## API Report File for "gate-pkg"');
    expect(root).toContain(
      [
        'export class Gate {',
        '    constructor(name: string, options?: GateOptions);',
        '    open(): void;',
        '}',
        '',
        'export function gate(name: string): Gate;',
        '',
        'export interface GateOptions {',
        '    limit: number;',
        '}',
      ].join('\n'),
    );
    expect(root).not.toContain('(undocumented)');
    expect(report('extra')).toContain('## API Report File for "gate-pkg/extra"');
    expect(report('extra')).toContain('export const EXTRA_LIMIT = 3;');

    // A doc comment is not the surface: the same report, the check passes.
    write(
      'dist/index.d.ts',
      ROOT_DTS.replace('    open(): void;', '    /** Opens. */\n    open(): void;'),
    );
    const same = run();
    expect(same.status).toBe(0);
    expect(same.stdout).toContain('same    .                    3 names  api/root.api.md');
    expect(report('root')).toBe(root);

    write('dist/index.d.ts', ROOT_DTS.replace('open(): void;', 'open(force: boolean): void;'));
    const changed = run();
    expect(changed.status).toBe(1);
    expect(changed.stdout).toContain('DIFFERS .                    3 names  api/root.api.md');
    expect(changed.stderr).toContain(
      [
        '.: the public API differs from api/root.api.md:',
        '@@ line 9 @@',
        '      constructor(name: string, options?: GateOptions);',
        '-     open(): void;',
        '+     open(force: boolean): void;',
        '  }',
      ].join('\n'),
    );
    expect(changed.stderr).toContain('run `npm run api:update`');
    expect(report('root')).toBe(root);
  }, 180_000);

  it('fails on a new exported name, a new entry point without a report, and a report without an entry point', () => {
    expect(run('--update').status).toBe(0);
    write(
      'dist/index.d.ts',
      `${ROOT_DTS.replace('open(): void;', 'open(force: boolean): void;')}export type GateState = 'open' | 'shut';\n`,
    );
    const pkg = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    pkg.exports['./more'] = { types: './dist/more/index.d.ts' };
    delete pkg.exports['./extra'];
    write('package.json', JSON.stringify(pkg));
    write('dist/more/index.d.ts', 'export declare const MORE = 1;\n');

    const check = run();
    expect(check.status).toBe(1);
    // Two changes far apart: two hunks, each with its context, not one block between them.
    expect(check.stderr).toContain(
      [
        '@@ line 9 @@',
        '      constructor(name: string, options?: GateOptions);',
        '-     open(): void;',
        '+     open(force: boolean): void;',
        '  }',
        '@@ line 16 @@',
        '  }',
        '+ ',
        "+ export type GateState = 'open' | 'shut';",
      ].join('\n'),
    );
    expect(check.stderr).toContain(
      './more: no report api/more.api.md: run npm run api:update and commit it',
    );
    expect(check.stderr).toContain(
      'api/extra.api.md: no such entry point in package.json "exports"; npm run api:update removes it',
    );
  }, 180_000);
});
