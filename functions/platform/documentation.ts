import * as z from 'zod';

/**
 * How a schema is documented when the route checks it in two steps: the route takes any JSON object
 * and its service checks it against one of several shapes (a knowledge item: a listing or a document,
 * by the base's kind). The OpenAPI document shows `oneOf` those shapes, which are the ones the service
 * parses with, so the reference and the behaviour agree. Built on first use, like the shapes (`oneOf`
 * returns zod schemas).
 */
export const documentedAs = z.registry<{ oneOf: () => object[] }>();
