// The root entry: the engine, and (as it lands) the Nest layer. It never
// imports an optional peer; integrations have their own subpath exports.
export * from './core/index.js';
