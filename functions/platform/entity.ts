import { Entity as ElectroEntity, Service as ElectroService } from 'electrodb';
import { ENTITY_MODELS_PREVALIDATED } from './table.js';

/**
 * ElectroDB's `Entity` and `Service`, built on first use. Every entity module builds its entities when
 * it is imported, and a function imports the entity modules of every domain it touches: building a
 * model (parsing attributes, indexes, clauses) is a large part of a Lambda's cold load, mostly for
 * entities the invocation never uses. So in the bundles (ENTITY_MODELS_PREVALIDATED) `new Entity(…)`
 * returns a stand-in that builds the entity when first touched; where the source runs unbundled
 * (tests, the local stack) the entity is built at once, so an invalid model still throws on import.
 * Import `Entity` and `Service` from here, never from 'electrodb' (types may come from 'electrodb').
 */
function builtOnFirstUse<T extends object>(build: () => T, prototype: object): T {
  let instance: T | undefined;
  const real = (): T => (instance ??= build());
  if (!ENTITY_MODELS_PREVALIDATED) real();
  // Methods are bound to the built object, so ElectroDB's own `this.…` never goes through the stand-in.
  const bound = new WeakMap<object, unknown>();
  return new Proxy(Object.create(prototype) as T, {
    get(_target, key) {
      const target = real();
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      let method = bound.get(value);
      if (!method) {
        method = (value as (...args: unknown[]) => unknown).bind(target);
        bound.set(value, method);
      }
      return method;
    },
    set: (_target, key, value) => Reflect.set(real(), key, value),
    has: (_target, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor(_target, key) {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      // The stand-in's own target has no such property: a proxy may only report it as configurable.
      return descriptor && { ...descriptor, configurable: true };
    },
    defineProperty: (_target, key, descriptor) => Reflect.defineProperty(real(), key, descriptor),
    deleteProperty: (_target, key) => Reflect.deleteProperty(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
}

function lazyClass<C extends abstract new (...args: never[]) => object>(Real: C): C {
  function Lazy(...args: unknown[]): object {
    return builtOnFirstUse(
      () => new (Real as unknown as new (...a: unknown[]) => object)(...args),
      Real.prototype,
    );
  }
  Lazy.prototype = Real.prototype;
  Object.setPrototypeOf(Lazy, Real);
  return Lazy as unknown as C;
}

export const Entity = lazyClass(ElectroEntity);
export const Service = lazyClass(ElectroService);
