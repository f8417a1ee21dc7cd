/** The page's style sheet: system fonts, no image, light and dark schemes. @internal */
export const DASHBOARD_STYLES = `
:root { color-scheme: light dark; --bg: #f5f6f8; --card: #fff; --ink: #1d2330; --muted: #5d6677; --line: #dde1e8;
  --closed: #2e7d32; --open: #c62828; --half-open: #e68a00; --isolated: #7b1fa2; --disabled: #607d8b; --metrics-only: #00838f; }
@media (prefers-color-scheme: dark) { :root { --bg: #12151b; --card: #1b2029; --ink: #e6e9ef; --muted: #9aa3b2; --line: #2c3340; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--ink); }
header.top { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; padding: 14px 20px; border-bottom: 1px solid var(--line); background: var(--card); }
header.top h1 { font-size: 18px; margin: 0 auto 0 0; }
#cb-status { color: var(--muted); }
#cb-status[data-live="true"]::before { content: "● "; color: var(--closed); }
#cb-status[data-live="false"]::before { content: "● "; color: var(--open); }
#cb-reason { min-width: 16em; padding: 4px 6px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--ink); }
#cb-fleet { margin: 12px 20px 0; padding: 8px 12px; border-radius: 6px; background: var(--card); border-left: 4px solid var(--closed); }
#cb-fleet[data-shared="false"] { border-left-color: var(--open); }
#cb-fleet ul { margin: 4px 0 0; padding-left: 18px; }
#cb-limiters { margin: 12px 20px 0; padding: 8px 12px; border-radius: 6px; background: var(--card); border-left: 4px solid var(--closed); }
#cb-limiters ul { margin: 0; padding-left: 18px; }
#cb-limiters li[data-shedding="true"] { color: var(--half-open); }
#cb-fleet li[data-state="open"], #cb-fleet [data-fleet="error"] { color: var(--open); }
#cb-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 14px; padding: 16px 20px; }
.tile { background: var(--card); border: 1px solid var(--line); border-top: 6px solid var(--state, var(--closed)); border-radius: 8px; padding: 12px 14px; }
.tile[data-state="closed"] { --state: var(--closed); }
.tile[data-state="open"] { --state: var(--open); }
.tile[data-state="half-open"] { --state: var(--half-open); }
.tile[data-state="isolated"] { --state: var(--isolated); }
.tile[data-state="disabled"] { --state: var(--disabled); }
.tile[data-state="metrics-only"] { --state: var(--metrics-only); }
.tile > header { display: flex; justify-content: space-between; align-items: baseline; gap: 8px; }
.tile h2 { font-size: 15px; margin: 0; overflow-wrap: anywhere; }
.badge { color: #fff; background: var(--state, var(--closed)); border-radius: 999px; padding: 1px 10px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.forced, .countdown { margin: 8px 0 0; font-weight: 600; color: var(--state); }
dl.stats { display: grid; grid-template-columns: repeat(3, 1fr); gap: 6px 10px; margin: 10px 0 6px; }
dl.stats div { min-width: 0; }
dt { color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .03em; }
dd { margin: 0; font-variant-numeric: tabular-nums; font-weight: 600; }
svg.spark { width: 100%; height: 40px; display: block; background: var(--bg); border-radius: 4px; }
svg.spark polyline { fill: none; stroke-width: 1.5; vector-effect: non-scaling-stroke; }
svg.spark .calls { stroke: #1e88e5; }
svg.spark .failures { stroke: var(--open); }
.legend { color: var(--muted); font-size: 11px; margin: 2px 0 0; }
.legend .c { color: #1e88e5; } .legend .f { color: var(--open); }
.why, .family p, .shared, .error { margin: 6px 0 0; color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.error { color: var(--open); }
.family ol { margin: 4px 0 0; padding-left: 18px; font-size: 12px; }
.family li[data-state="open"], .family li[data-state="isolated"] { color: var(--open); }
.family li[data-state="half-open"] { color: var(--half-open); }
.controls { display: flex; gap: 6px; margin-top: 10px; }
.controls button { flex: 1; padding: 4px 6px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--ink); cursor: pointer; font: inherit; font-size: 12px; }
.controls button:hover { border-color: var(--ink); }
[hidden] { display: none !important; }
`;
