// The links check of tools/pack-check.mjs: which links and images of the shipped
// Markdown would be dead from the installed package. Pure (the caller gives the file
// list, the reader and git's list of tracked files), so test/tools/pack-links.spec.ts
// can run it on made-up files.

import { dirname, join, sep } from 'node:path';

/** Targets of the links and images of a Markdown file, with their line: inline, reference and HTML. */
export function linksOf(text) {
  const links = [];
  let fence = null;
  text.split('\n').forEach((raw, index) => {
    const opening = raw.match(/^\s*(`{3,}|~{3,})/);
    if (fence) {
      if (opening && opening[1][0] === fence[0] && opening[1].length >= fence.length) fence = null;
      return;
    }
    if (opening) {
      fence = opening[1];
      return;
    }
    const line = raw.replace(/(`+)[^`]*?\1/g, ''); // code spans hold no links
    const add = (target) => links.push({ line: index + 1, target });
    for (const m of line.matchAll(/\]\(\s*(?:<([^>]*)>|([^\s)]+))(?:\s+["'(][^)]*)?\)/g))
      add(m[1] ?? m[2]);
    const reference = line.match(/^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)/);
    if (reference) add(reference[1]);
    for (const m of line.matchAll(
      /<(?:img|a|source)\b[^>]*?\b(?:src|href|srcset)\s*=\s*(["'])(.*?)\1/gi,
    ))
      add(m[2]);
  });
  return links;
}

const IMAGE = /\.(png|svg|jpe?g|gif|webp)$/i;

/** The repository's web address, from package.json "repository" (git+https://host/owner/name.git). */
const repositoryWebUrl = (pkg) =>
  (typeof pkg.repository === 'string' ? pkg.repository : (pkg.repository?.url ?? ''))
    .replace(/^git\+/, '')
    .replace(/\.git$/, '');

/**
 * Every relative link and image of a shipped Markdown file must resolve to a shipped
 * file: the README is read on npm's page, in an editor from node_modules and on
 * GitHub, and only links to what the tarball holds work in all three. A link to a
 * file that stays in the repository is absolute, to its `blob/main/<path>` (`tree/`
 * for a folder, `raw/` for an image); those are checked against the files git
 * tracks (`tracked`; unchecked when undefined), so that a renamed file does not leave a dead link on npm. Returns the
 * problems, one line each (`file:line: target (why)`).
 */
export function markdownLinkProblems({ files, pkg, readText, tracked }) {
  const shipped = new Set(files.map(({ path }) => path));
  const folders = new Set(
    files.flatMap(({ path }) =>
      path
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );
  const inRepo = new Set(tracked ?? []);
  const repoFolders = new Set(
    [...inRepo].flatMap((path) =>
      path
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );
  const web = repositoryWebUrl(pkg);
  const [, owner, name] = web.match(/^https:\/\/github\.com\/([^/]+)\/([^/]+)$/) ?? [];
  const absolute = owner
    ? new RegExp(
        `^(?:${web.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/(?:blob|tree|raw)/[^/]+|https://raw\\.githubusercontent\\.com/${owner}/${name}/[^/]+)/([^#?]*)`,
      )
    : null;
  const problems = [];
  for (const file of shipped) {
    if (!file.endsWith('.md')) continue;
    const text = readText(file);
    for (const { line, target } of linksOf(text)) {
      const where = `${file}:${line}: ${target}`;
      const toRepo = absolute && target.match(absolute);
      if (toRepo) {
        const path = decodeURIComponent(toRepo[1]).replace(/\/$/, '');
        if (tracked && !inRepo.has(path) && !repoFolders.has(path))
          problems.push(`${where} (no such file in the repository)`);
        else if (IMAGE.test(path) && target.includes('/blob/') && !target.includes('raw=true'))
          problems.push(
            `${where} (an image from blob/ is a web page: use ${web}/raw/main/${path})`,
          );
        continue;
      }
      if (/^[a-z][a-z\d+.-]*:/i.test(target) || target.startsWith('//') || target.startsWith('#'))
        continue;
      const path = decodeURIComponent(target.replace(/[#?].*$/, ''));
      const resolved = join(dirname(file), path).split(sep).join('/').replace(/\/$/, '');
      if (resolved.startsWith('..')) problems.push(`${where} (outside the package)`);
      else if (!shipped.has(resolved) && !folders.has(resolved))
        problems.push(
          `${where} (${resolved} is not shipped: link to ${web}/${IMAGE.test(resolved) ? 'raw' : repoFolders.has(resolved) ? 'tree' : 'blob'}/main/${resolved}, or ship it)`,
        );
    }
  }
  return problems;
}
