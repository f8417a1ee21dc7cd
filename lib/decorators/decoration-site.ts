/**
 * Where a decorator was applied, for messages: `@RequireCircuitBreaker() on
 * OrdersController.create`, or `on OrdersController` for a class.
 *
 * @internal
 */
export function decorationSite(
  decorator: string,
  target: object,
  propertyKey: string | symbol | undefined,
): string {
  if (propertyKey === undefined) return `${decorator} on ${(target as { name: string }).name}`;
  const className = typeof target === 'function' ? target.name : target.constructor.name;
  return `${decorator} on ${className}.${String(propertyKey)}`;
}
