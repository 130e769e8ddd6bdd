/**
 * Every port of the core: the interfaces it needs from the outside world, one per role, with the shapes they pass,
 * kept by what they are about. Adapters implement them (`functions/adapters`, `functions/imaging`), tests fake them
 * (`test/support/in-memory.ts`), and a contract suite per port runs against both (`test/contract`).
 */
export * from './imaging';
export * from './files';
export * from './images';
export * from './counters';
export * from './lists';
export * from './runtime';
