import { KEY_SUFFIX } from './redis-breaker.constants.js';

/** The Redis keys of one shared breaker. @internal */
export interface BreakerKeys {
  /** Hash: the fleet's state (`state`, `openUntil`, `generation`, `origin`, `at`, `reason`, `reports`). */
  readonly state: string;
  /** Sorted set: one member per replica that reports the breaker open, scored by its open-until time. */
  readonly opens: string;
  /** String: the instance that holds the fleet's probe permit, expiring with the probe deadline. */
  readonly probe: string;
  /** Hash: the fleet's forced state (`state`, `reason`, `by`, `until`, `generation`, `origin`, `at`), or its release. */
  readonly force: string;
  /** Hash: the fleet's reconfiguration (`patch` as JSON, `generation`, `origin`, `at`, and `refused:<instance>` lines). */
  readonly config: string;
}

// Kept as is: letters, digits and `_ . -`. Everything else, `%` included, becomes %XX of its UTF-8 bytes.
const SAFE = /^[A-Za-z0-9_.-]$/;

/**
 * A breaker name as it appears in a key: injective (two names never share a
 * key), free of `{` and `}` (which would break the hash tag), of `:` (the
 * separator) and of glob characters (`*?[]`), so that keys can be scanned by
 * pattern safely.
 *
 * @internal
 */
export function escapeKeyPart(name: string): string {
  let out = '';
  for (const char of name) {
    if (SAFE.test(char)) {
      out += char;
      continue;
    }
    const code = char.codePointAt(0)!;
    // A lone surrogate has no UTF-8 form: `%u` + its code unit keeps such names apart (`u` is no hex digit).
    if (code >= 0xd800 && code <= 0xdfff) out += `%u${code.toString(16).toUpperCase()}`;
    else
      for (const byte of Buffer.from(char, 'utf8'))
        out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * The keys of breaker `name` under `prefix`. The escaped name is a Redis
 * Cluster hash tag (`{...}`), so the keys of one breaker live in one
 * slot and one script can update them atomically; different breakers spread
 * over the cluster.
 *
 * @internal
 */
export function breakerKeys(prefix: string, name: string): BreakerKeys {
  const base = `${prefix}{${escapeKeyPart(name)}}:`;
  return Object.freeze({
    state: base + KEY_SUFFIX.state,
    opens: base + KEY_SUFFIX.opens,
    probe: base + KEY_SUFFIX.probe,
    force: base + KEY_SUFFIX.force,
    config: base + KEY_SUFFIX.config,
  });
}

/** The pub/sub channel every replica of the prefix listens on. @internal */
export function channelOf(prefix: string): string {
  return prefix + KEY_SUFFIX.channel;
}

/**
 * The registry of replicas' sorted set under `prefix` (one member per
 * replica that reports; see `registryKeys`): what the quorum `'auto'` counts.
 *
 * @internal
 */
export function replicasSeenKey(prefix: string): string {
  return `${prefix}{~replicas}:seen`;
}
