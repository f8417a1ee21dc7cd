/** A link or image of a Markdown file: its target as written, and its line (from 1). */
export interface MarkdownLink {
  line: number;
  target: string;
}

export function linksOf(text: string): MarkdownLink[];

/** `file:line: target (why)` for each link of a shipped Markdown file that is dead from the installed package. */
export function markdownLinkProblems(input: {
  /** What the tarball holds (`npm pack --json`'s `files`). */
  files: { path: string; size: number }[];
  /** package.json: its `repository` gives the address of absolute links. */
  pkg: { repository?: string | { url?: string } };
  readText: (file: string) => string;
  /** The repository's files (`git ls-files`); absolute links are not checked without it. */
  tracked?: string[];
}): string[];
