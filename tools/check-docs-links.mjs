#!/usr/bin/env node
// `npm run lint:docs`: every relative link and `#anchor` of the documentation must lead somewhere.
// A page split or a heading renamed breaks links silently: GitHub shows the page and
// ignores an anchor it cannot find. This checks, without the network:
// - a relative link names a file or folder of the repository;
// - an anchor (`page.md#heading`, `#heading`) is a heading of the target page, by GitHub's
//   slug rules (github-slugger), or an explicit `<a id>` / `<a name>`;
// - a link to this repository on GitHub (`https://github.com/<REPO>/blob/main/<path>`, used for
//   files the npm package does not ship) names a path that exists, and its anchor likewise.
// Other absolute links are not fetched.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPOSITORY_URL = 'https://github.com/nestjs-circuit-breaker/nestjs-circuit-breaker';

/** The pages checked, relative to the repository's root. */
export function pagesOf(root) {
  const pages = ['README.md', 'CHANGELOG.md', 'api/INVENTORY.md'].filter((page) =>
    existsSync(join(root, page)),
  );
  pages.push(...markdownUnder(root, 'docs', () => true));
  pages.push(...markdownUnder(root, 'lib', (name) => name === 'README.md'));
  return pages;
}

function markdownUnder(root, folder, keep) {
  const found = [];
  const walk = (dir) => {
    if (!existsSync(join(root, dir))) return;
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true }).toSorted((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md') && keep(entry.name)) found.push(path);
    }
  };
  walk(folder);
  return found;
}

/**
 * GitHub's anchor for a heading's text (github-slugger): lower case, every character that
 * is not a letter, a mark, a digit, `_`, `-` or a space removed, spaces made hyphens.
 * Markdown in the heading counts by its rendered text: `[text](url)` is `text`, code spans
 * keep their content, HTML tags are dropped.
 */
export function slugOf(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim();
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Lines outside fenced code blocks, with their line numbers (1-based). */
function proseLines(markdown) {
  const lines = [];
  let fence = null;
  markdown.split('\n').forEach((line, index) => {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === null && opening) {
      fence = opening[1];
      return;
    }
    if (fence !== null) {
      if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '') fence = null;
      return;
    }
    lines.push({ line, number: index + 1 });
  });
  return lines;
}

/** Every anchor a page offers: its headings' slugs (repeated ones numbered as GitHub does) and explicit ids. */
export function anchorsOf(markdown) {
  const anchors = new Set();
  const seen = new Map();
  for (const { line } of proseLines(markdown)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = slugOf(heading[1]);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:[^>]*\s)?(?:id|name)\s*=\s*["']([^"']+)["']/gi))
      anchors.add(match[1]);
  }
  return anchors;
}

/** Every link target of a page, outside code, with its line number. */
export function linksOf(markdown) {
  const links = [];
  for (const { line, number } of proseLines(markdown)) {
    const prose = line.replace(/(`+)[\s\S]*?\1/g, (code) => ' '.repeat(code.length));
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g))
      links.push({ target: match[1], line: number });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose);
    if (definition) links.push({ target: definition[1], line: number });
    for (const match of prose.matchAll(/\s(?:href|src)\s*=\s*"([^"]*)"/g))
      links.push({ target: match[1], line: number });
  }
  return links;
}

/**
 * What is wrong with one link of `page` (a path relative to `root`), or `undefined`.
 * `anchorsOfPage(path)` gives the anchors of a page of the repository.
 */
export function problemOf(root, page, target, anchorsOfPage) {
  if (target === '') return 'an empty link';
  let pathAndAnchor;
  const blob = `${REPOSITORY_URL}/blob/main/`;
  const tree = `${REPOSITORY_URL}/tree/main/`;
  if (target.startsWith(blob) || target.startsWith(tree)) {
    pathAndAnchor = {
      base: root,
      rest: target.slice(target.startsWith(blob) ? blob.length : tree.length),
    };
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) {
    return undefined;
  } else {
    pathAndAnchor = {
      base: target.startsWith('/') ? root : join(root, dirname(page)),
      rest: target.replace(/^\//, ''),
    };
  }
  const hash = pathAndAnchor.rest.indexOf('#');
  const path = decodeURIComponent(
    hash === -1 ? pathAndAnchor.rest : pathAndAnchor.rest.slice(0, hash),
  );
  const anchor = hash === -1 ? undefined : decodeURIComponent(pathAndAnchor.rest.slice(hash + 1));
  const file = path === '' ? join(root, page) : resolve(pathAndAnchor.base, path.split('?')[0]);
  const inRepo = relative(root, file);
  if (inRepo.startsWith('..')) return `leads outside the repository (${inRepo})`;
  if (!existsSync(file)) return `no file ${inRepo}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md'))
    return `an anchor (#${anchor}) on ${inRepo}, which is not a Markdown page`;
  const anchors = anchorsOfPage(inRepo);
  if (anchors.has(anchor)) return undefined;
  const near = [...anchors]
    .filter((known) => known.includes(anchor) || anchor.includes(known))
    .slice(0, 3);
  return `no heading #${anchor} in ${inRepo}${near.length > 0 ? ` (near: ${near.map((n) => `#${n}`).join(', ')})` : ''}`;
}

/** Every broken link of the documentation under `root`: `{ page, line, target, problem }`. */
export function brokenLinks(root) {
  const cache = new Map();
  const anchorsOfPage = (path) => {
    if (!cache.has(path)) cache.set(path, anchorsOf(readFileSync(join(root, path), 'utf8')));
    return cache.get(path);
  };
  const broken = [];
  for (const page of pagesOf(root)) {
    for (const { target, line } of linksOf(readFileSync(join(root, page), 'utf8'))) {
      const problem = problemOf(root, page, target, anchorsOfPage);
      if (problem !== undefined) broken.push({ page, line, target, problem });
    }
  }
  return broken;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const pages = pagesOf(root);
  const broken = brokenLinks(root);
  for (const { page, line, target, problem } of broken)
    console.error(`${page}:${line}: ${target}: ${problem}`);
  if (broken.length > 0) {
    console.error(
      `${broken.length} broken link(s) in ${pages.length} pages. Fix the link, or the heading it names.`,
    );
    process.exit(1);
  }
  console.log(`docs links: ${pages.length} pages, every relative link and anchor found.`);
}
