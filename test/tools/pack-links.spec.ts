import { describe, expect, it } from 'vitest';
import { linksOf, markdownLinkProblems } from '../../tools/pack-links.mjs';

// `npm run test:pack` fails when a link or image of a shipped Markdown file would be
// dead from the installed package (issue 29): these run its check on made-up files.

const WEB = 'https://github.com/acme/gate';
const pkg = { repository: { type: 'git', url: `git+${WEB}.git` } };

function problems(texts: Record<string, string>, tracked?: string[]): string[] {
  const files = Object.keys(texts).map((path) => ({ path, size: texts[path]!.length }));
  return markdownLinkProblems({ files, pkg, readText: (file: string) => texts[file], tracked });
}

describe('linksOf', () => {
  it('finds inline links, images, reference definitions and HTML, with their line', () => {
    const text = [
      '# Gate',
      'See [the guide](docs/guide.md#start "Guide") and ![chart](bench/chart.svg).',
      '[ref]: CONTRIBUTING.md',
      '<img src="docs/shot.png" width="600"> <a href="https://example.com/x">x</a>',
    ].join('\n');
    expect(linksOf(text)).toEqual([
      { line: 2, target: 'docs/guide.md#start' },
      { line: 2, target: 'bench/chart.svg' },
      { line: 3, target: 'CONTRIBUTING.md' },
      { line: 4, target: 'docs/shot.png' },
      { line: 4, target: 'https://example.com/x' },
    ]);
  });

  it('ignores what is inside code spans and fenced blocks', () => {
    const text = ['`[a](in-span.md)`', '```md', '[b](in-fence.md)', '```', '[c](after.md)'].join(
      '\n',
    );
    expect(linksOf(text)).toEqual([{ line: 5, target: 'after.md' }]);
  });
});

describe('markdownLinkProblems', () => {
  it('accepts relative links to shipped files and folders, anchors and other sites', () => {
    const readme = '[log](CHANGELOG.md#010) [ops](operator/) [top](#gate) [npm](https://npmjs.com)';
    expect(
      problems({ 'README.md': readme, 'CHANGELOG.md': '', 'operator/alerts.yml': '' }),
    ).toEqual([]);
  });

  it('names the file, the line and the absolute link to use for what is not shipped', () => {
    const readme = 'Intro\n[guide](docs/guide.md) ![chart](bench/chart.svg) [sample](sample/)';
    expect(
      problems({ 'README.md': readme }, ['docs/guide.md', 'bench/chart.svg', 'sample/a.ts']),
    ).toEqual([
      `README.md:2: docs/guide.md (docs/guide.md is not shipped: link to ${WEB}/blob/main/docs/guide.md, or ship it)`,
      `README.md:2: bench/chart.svg (bench/chart.svg is not shipped: link to ${WEB}/raw/main/bench/chart.svg, or ship it)`,
      `README.md:2: sample/ (sample is not shipped: link to ${WEB}/tree/main/sample, or ship it)`,
    ]);
  });

  it('checks absolute links into the repository against the files git tracks', () => {
    const readme = [
      `[guide](${WEB}/blob/main/docs/guide.md#start)`,
      `[gone](${WEB}/blob/main/docs/renamed.md)`,
      `![shot](${WEB}/blob/main/docs/shot.png)`,
      `![shot](${WEB}/raw/main/docs/shot.png)`,
    ].join('\n');
    expect(problems({ 'README.md': readme }, ['docs/guide.md', 'docs/shot.png'])).toEqual([
      `README.md:2: ${WEB}/blob/main/docs/renamed.md (no such file in the repository)`,
      `README.md:3: ${WEB}/blob/main/docs/shot.png (an image from blob/ is a web page: use ${WEB}/raw/main/docs/shot.png)`,
    ]);
  });

  it('rejects a relative link out of the package', () => {
    expect(problems({ 'README.md': '[up](../other/README.md)' })).toEqual([
      'README.md:1: ../other/README.md (outside the package)',
    ]);
  });
});
