#!/usr/bin/env node
// Reads vitest's JSON report and prints the closing line CI is judged by:
//
//   N passed, N failed[, N skipped]
//
// Usage: node tools/test-summary.mjs <report.json> [vitest-exit-code]
// The report comes from
//   vitest run --reporter=default --reporter=json --outputFile.json=<report.json>
// Pass vitest's exit code too when you have it: the report does not show unhandled
// errors (it says `success: true`), vitest's exit code does.
//
// Counts are tests (numPassedTests, numFailedTests, numPendingTests + numTodoTests).
// On top of the failed tests, one failure is counted
//   - per test file that failed without a failed test in it (it did not load, or a
//     beforeAll/afterAll hook threw), and
//   - for errors outside any test (unhandled errors, a crash) when the report has
//     no failure but says `success: false` or vitest exited non-zero.
// Exit code 1 when the report is missing or unreadable, when anything failed, and
// when no test ran at all (CI must not pass on zero tests); 0 otherwise.
// The summary is always the last line printed.

import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const [file, exitArg] = process.argv.slice(2);
const vitestExit = exitArg === undefined ? 0 : Number(exitArg);
const summary = (passed, failed, skipped) =>
  `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;

function finish(lines, passed, failed, skipped, exitCode) {
  for (const line of lines) console.log(line);
  console.log(summary(passed, failed, skipped));
  process.exitCode = exitCode;
}

let report;
try {
  if (!file)
    throw new Error('no report path given (usage: node tools/test-summary.mjs <report.json>)');
  report = JSON.parse(readFileSync(file, 'utf8'));
  if (typeof report !== 'object' || report === null || typeof report.numTotalTests !== 'number') {
    throw new Error('it is not a vitest JSON report (no numTotalTests)');
  }
} catch (error) {
  const reason = error instanceof SyntaxError ? `not valid JSON: ${error.message}` : error.message;
  finish([`test-summary: cannot use the vitest report ${file ?? ''}: ${reason}`], 0, 0, 0, 1);
  process.exit();
}

const count = (value) => (Number.isFinite(value) ? value : 0);
const passed = count(report.numPassedTests);
let failed = count(report.numFailedTests);
const skipped = count(report.numPendingTests) + count(report.numTodoTests);
const lines = [];
const name = (path) =>
  typeof path === 'string' ? relative(process.cwd(), path) || path : String(path);

for (const result of report.testResults ?? []) {
  const tests = result.assertionResults ?? [];
  for (const test of tests) {
    if (test.status === 'failed')
      lines.push(`FAIL ${name(result.name)} > ${test.fullName ?? test.title}`);
  }
  if (result.status === 'failed' && !tests.some((test) => test.status === 'failed')) {
    failed += 1;
    const what = tests.length === 0 ? 'failed to load' : 'failed outside its tests';
    const message = String(result.message ?? '').split('\n')[0];
    lines.push(`FAIL ${name(result.name)} ${what}${message ? `: ${message}` : ''}`);
  }
}

const total = count(report.numTotalTests);
if (failed === 0 && total > 0 && (report.success === false || vitestExit !== 0)) {
  failed += 1;
  const why = vitestExit !== 0 ? `vitest exited ${exitArg}` : 'the report says success: false';
  lines.push(
    `FAIL ${why} with no failed test: errors outside the tests (unhandled errors?), see its output above`,
  );
}

if (total === 0 && failed === 0) {
  lines.push('test-summary: no test ran; CI does not pass without tests');
  finish(lines, passed, failed, skipped, 1);
} else {
  finish(lines, passed, failed, skipped, failed > 0 ? 1 : 0);
}
