import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// docs/testing-nest-new.md, "Test a `nest new` app with Vitest", as a user follows it: the package is
// built and packed as npm publishes it, installed offline into a copy of the CommonJS application
// `nest new` writes (test/fixtures/nest-new-app/, from @nestjs/schematics 12's `ts` template), the
// page's blocks are written into it as they are on the page, and the application's own
// `npm test` runs them. The fixture's package.json and tsconfig.json must say what the page says.

const repo = fileURLToPath(new URL('../..', import.meta.url));
const fixture = join(repo, 'test', 'fixtures', 'nest-new-app');
const page = readFileSync(join(repo, 'docs', 'testing-nest-new.md'), 'utf8');

/** What `npm install` would put in the application's node_modules, taken from this repository's. */
const INSTALLED = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  '@nestjs/testing',
  '@types/node',
  '@types/supertest',
  'reflect-metadata',
  'rxjs',
  'supertest',
  'typescript',
  'vite',
  'vitest',
];

/** The fenced block that follows `<!-- recipe:NAME -->` on the page. */
function recipeBlock(name: string): string {
  const marker = `<!-- recipe:${name} -->`;
  const at = page.indexOf(marker);
  if (at < 0) throw new Error(`docs/testing-nest-new.md has no ${marker}`);
  const block = /```\w*\n([\s\S]*?)\n```/.exec(page.slice(at + marker.length));
  if (!block) throw new Error(`docs/testing-nest-new.md has no code block after ${marker}`);
  return `${block[1]}\n`;
}

function run(command: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  // The application's vitest must not think it runs inside this one.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(__)?VITEST|^VITE_/.test(key)),
  );
  return spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

function succeeded(result: SpawnSyncReturns<string>, what: string): string {
  if (result.error) throw new Error(`${what}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(`${what} exited ${result.status}\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

const tsc = join(repo, 'node_modules', '.bin', 'tsc');

/** Builds lib/ into a copy of the package's published files and packs it: dist/ may be stale. */
function packPackage(work: string): string {
  const stage = join(work, 'package');
  mkdirSync(stage);
  for (const entry of [
    'package.json',
    'README.md',
    'CHANGELOG.md',
    'LICENSE',
    'docs',
    'lib',
    'operator',
    'tools/bundle.mjs',
  ]) {
    cpSync(join(repo, entry), join(stage, entry), { recursive: true });
  }
  const build = ['-p', join(repo, 'tsconfig.build.json'), '--outDir', join(stage, 'dist')];
  succeeded(run(tsc, build, repo), 'tsc -p tsconfig.build.json');
  // The rest of `npm run build`: the bundle the package ships (its bundler from the repo's node_modules).
  symlinkSync(join(repo, 'node_modules'), join(stage, 'node_modules'), 'dir');
  succeeded(run(process.execPath, [join(stage, 'tools', 'bundle.mjs')], stage), 'tools/bundle.mjs');
  const packed = succeeded(
    run('npm', ['pack', '--json', '--pack-destination', work], stage),
    'npm pack',
  );
  return join(work, (JSON.parse(packed) as [{ filename: string }])[0].filename);
}

/** The fixture, with the page's blocks written in and the packed package installed without network. */
function installApplication(work: string, tarball: string): string {
  const app = join(work, 'app');
  cpSync(fixture, app, { recursive: true });
  writeFileSync(join(app, 'vitest.config.mts'), recipeBlock('vitest.config.mts'));
  writeFileSync(
    join(app, 'src', 'catalog.breaker.spec.ts'),
    recipeBlock('src/catalog.breaker.spec.ts'),
  );
  const modules = join(app, 'node_modules');
  for (const name of INSTALLED) {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(repo, 'node_modules', name), join(modules, name), 'dir');
  }
  mkdirSync(join(modules, '.bin'));
  symlinkSync(join('..', 'vitest', 'vitest.mjs'), join(modules, '.bin', 'vitest'));
  const installed = join(modules, 'nestjs-circuit-breaker');
  mkdirSync(installed);
  succeeded(run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'], app), 'tar');
  return app;
}

interface VitestReport {
  success: boolean;
  numTotalTests: number;
  numPassedTests: number;
  testResults: { name: string; assertionResults: { fullName: string; status: string }[] }[];
}

/** Runs one of the application's npm scripts; every test it ran, as `file: name status`. */
function runTests(app: string, script: string): Set<string> {
  const report = join(app, `${script.replace(':', '-')}-report.json`);
  const args = [
    'run',
    script,
    '--',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
  ];
  const result = run('npm', args, app);
  expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  const json = JSON.parse(readFileSync(report, 'utf8')) as VitestReport;
  const tests = json.testResults.flatMap((file) =>
    file.assertionResults.map(
      (test) => `${file.name.slice(app.length + 1)}: ${test.fullName} ${test.status}`,
    ),
  );
  expect([json.success, json.numPassedTests, json.numTotalTests]).toEqual([
    true,
    tests.length,
    tests.length,
  ]);
  return new Set(tests);
}

describe('docs/testing-nest-new.md: the recipe for a nest new app, in a CommonJS application', () => {
  let work: string;
  let app: string;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'nest-new-recipe-'));
    app = installApplication(work, packPackage(work));
  }, 120_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the fixture is a CommonJS application with the packages and scripts the page names', () => {
    const pkg = JSON.parse(readFileSync(join(fixture, 'package.json'), 'utf8'));
    const tsconfig = JSON.parse(readFileSync(join(fixture, 'tsconfig.json'), 'utf8'));
    expect(pkg.type).toBeUndefined();
    expect(tsconfig.compilerOptions).toMatchObject({
      module: 'nodenext',
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      types: ['node', 'vitest/globals'],
    });
    expect(page).toContain('`"types": ["node", "vitest/globals"]` instead of `["node", "jest"]`');

    const install = recipeBlock('install');
    expect(install).toContain(
      `vitest@${pkg.devDependencies.vitest} vite@${pkg.devDependencies.vite}`,
    );
    expect([pkg.devDependencies.vitest, pkg.devDependencies.vite]).toEqual(['4.1.12', '8.3.8']);
    for (const gone of ['jest', 'ts-jest', '@types/jest']) {
      expect(install).toContain(gone);
      expect(pkg.devDependencies[gone]).toBeUndefined();
    }
    expect(existsSync(join(fixture, 'jest.config.ts'))).toBe(false);
    expect(existsSync(join(fixture, 'test', 'jest-e2e.json'))).toBe(false);

    const scripts = JSON.parse(`{${recipeBlock('scripts')}}`);
    expect(pkg.scripts).toMatchObject(scripts);
    expect(Object.values(pkg.scripts).filter((script) => /jest/.test(String(script)))).toEqual([]);
  });

  it('type-checks with the installed package (tsconfig.json as nest new writes it)', () => {
    succeeded(
      run(tsc, ['-p', 'tsconfig.json', '--noEmit'], app),
      'tsc --noEmit in the application',
    );
  }, 60_000);

  it("runs the page's spec and the specs nest new wrote with the application's npm test", () => {
    expect(runTests(app, 'test')).toEqual(
      new Set([
        'src/app.controller.spec.ts: AppController root should return "Hello World!" passed',
        'src/catalog.breaker.spec.ts: the catalog breaker answers 503 while the catalog is down, and recovers passed',
        'test/app.e2e-spec.ts: AppController (e2e) / (GET) passed',
      ]),
    );
  }, 120_000);

  it('runs the end-to-end spec alone with npm run test:e2e', () => {
    expect(runTests(app, 'test:e2e')).toEqual(
      new Set(['test/app.e2e-spec.ts: AppController (e2e) / (GET) passed']),
    );
  }, 120_000);
});
