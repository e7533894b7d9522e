import * as z from 'zod';

/**
 * A value built on its first use, e.g. ElectroDB's `createConversions(entity)`, which would otherwise
 * build its entity at import: `const conversions = onFirstUse(() => createConversions(E))`, then
 * `conversions().…`.
 */
export function onFirstUse<T>(build: () => T): () => T {
  let value: T | undefined;
  let built = false;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}

/**
 * A zod schema built on its first use: a parse, or the docs generator reading it. A domain's shapes
 * are hundreds of zod objects (each a few dozen closures), and every function that imports the domain
 * would build them all at its cold start, although an invocation parses one body at most and response
 * shapes are only documentation. The result is a schema like any other (nest it, parse with it); to
 * derive another from it, `.unwrap()` it inside the other's builder: `schemaOnFirstUse(() =>
 * Base.unwrap().extend({ … }))`.
 */
export function schemaOnFirstUse<T extends z.ZodType>(build: () => T): z.ZodLazy<T> {
  return z.lazy(onFirstUse(build));
}
