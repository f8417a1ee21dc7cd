import { Logger } from '@nestjs/common';

const hookErrorLogger = new Logger('CircuitBreaker');

/** @internal The application's listener or classifier errors (hook errors), in the application's log (the error names the breaker and the fix). */
export function reportError(error: Error): void {
  let stack: string | undefined;
  try {
    stack = error.cause instanceof Error ? error.cause.stack : undefined;
  } catch {
    // What was thrown cannot be read: the message already says so.
  }
  hookErrorLogger.error(error.message, stack);
}
