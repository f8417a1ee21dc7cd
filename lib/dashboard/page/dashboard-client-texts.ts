import type { DashboardBreaker, DashboardChild } from '../dashboard-view.interface.js';

// What the page's script writes as text. Each function here is sent as its
// own source text with the script (see `dashboardClient`), so it uses
// nothing from outside its body but its arguments.

/** How numbers, durations and times read on the page. @internal */
export function dashboardUnits() {
  const percent = (ratio: number) => `${(ratio * 100).toFixed(ratio > 0 && ratio < 0.1 ? 1 : 0)}%`;
  const perSecond = (value: number) => (value >= 10 ? value.toFixed(0) : value.toFixed(1));
  const duration = (ms: number) => {
    const s = Math.max(0, ms) / 1000;
    if (s < 10) return `${s.toFixed(1)} s`;
    if (s < 120) return `${Math.floor(s)} s`;
    if (s < 7200) return `${Math.floor(s / 60)} min ${Math.floor(s % 60)} s`;
    return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  };
  const clockTime = (at: number) => new Date(at).toLocaleTimeString();
  return { percent, perSecond, duration, clockTime };
}

/** @internal */
export type DashboardUnits = ReturnType<typeof dashboardUnits>;

/** The state a tile shows, what an opening was decided on, and the tile's last transition. @internal */
export function dashboardStateTexts({ percent, clockTime }: DashboardUnits) {
  /** How bad a state looks, as the server ranks a family's children: isolated > open > half-open > disabled > closed. */
  const severity = (state: string) =>
    ({ closed: 0, disabled: 1, 'half-open': 2, open: 3, isolated: 4 })[state] ?? 1;

  /** The state a tile shows: a family's worst child when it is worse than the family's own. */
  function shownState(view: DashboardBreaker): { state: string; since: number; badge: string } {
    const { snapshot, aggregate } = view;
    const forced = snapshot.forced;
    const own = { state: snapshot.state, since: snapshot.since, badge: snapshot.state };
    if (forced !== undefined) return { ...own, badge: `forced ${forced.state}` };
    if (aggregate === undefined || severity(aggregate.worstState) <= severity(snapshot.state))
      return own;
    return {
      state: aggregate.worstState,
      since: aggregate.worstSince ?? snapshot.since,
      badge: `${aggregate.worstState} (${aggregate.worstCount} of ${snapshot.family?.keys ?? aggregate.worstCount} keys)`,
    };
  }

  /** What an opening was decided on: its window, or a streak of n failures as n failed calls. */
  function openedOnOf(
    last: DashboardBreaker['snapshot']['lastTransition'] | DashboardChild['lastTransition'],
  ): { calls: number; failures: number } | undefined {
    if (last === undefined) return undefined;
    if (last.window !== undefined) return last.window;
    const streak = last.consecutiveFailures;
    return streak === undefined ? undefined : { calls: streak, failures: streak };
  }

  /** The last transition: a family's newest one among its own and its children's. */
  function transitionText(view: DashboardBreaker): string {
    const own = view.snapshot.lastTransition;
    const child = view.aggregate?.lastTransition;
    const last = child !== undefined && (own === undefined || child.at > own.at) ? child : own;
    if (last === undefined) return 'no transition yet';
    return (
      (last === child ? `${child.key}: ` : '') +
      `${last.from} → ${last.to} (${last.reason})` +
      (last.consecutiveFailures !== undefined
        ? `: ${last.consecutiveFailures} failure${last.consecutiveFailures === 1 ? '' : 's'} in a row`
        : last.children !== undefined
          ? `: ${last.children.failing} of ${last.children.known} targets open or half-open`
          : last.window === undefined
            ? ''
            : last.reason === 'slow-call-rate'
              ? `: ${last.window.slowCalls} of ${last.window.calls} calls slow`
              : `: ${last.window.failures} of ${last.window.calls} calls failed (${percent(last.window.failureRate)})`) +
      ` at ${clockTime(last.at)}`
    );
  }

  return { shownState, openedOnOf, transitionText };
}

/** @internal */
export type DashboardStateTexts = ReturnType<typeof dashboardStateTexts>;

/**
 * A listed child's line: its state since when, its next probe, the rate it
 * is judged on. `at` is the breakers' clock when the snapshot was taken,
 * `elapsed` the time since it arrived. @internal
 */
export function dashboardChildText(
  { percent, duration, clockTime }: DashboardUnits,
  openedOnOf: DashboardStateTexts['openedOnOf'],
) {
  return (child: DashboardChild, at: number, elapsed: number): string => {
    const left = child.retryAfterMs === undefined ? undefined : child.retryAfterMs - elapsed;
    const probe =
      left === undefined
        ? ''
        : child.state === 'open'
          ? left > 0
            ? `, next probe in ${duration(left)}`
            : ', probe due'
          : `, paused by Retry-After: ${duration(left)}`;
    const opened =
      child.state === 'open' && child.calls === 0 ? openedOnOf(child.lastTransition) : undefined;
    const rate =
      opened === undefined
        ? child.failureRate
        : opened.calls === 0
          ? 0
          : opened.failures / opened.calls;
    return (
      `${child.key}: ${child.state} since ${clockTime(child.since)} (${duration(at - child.since + elapsed)})` +
      `${probe}, ${percent(rate)} of ${opened?.calls ?? child.calls}, ${child.rejected} rejected`
    );
  };
}
