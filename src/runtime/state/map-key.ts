import { previewValue } from '../../util/preview.js';

/**
 * Map state and broadcast state find their entries by key equality, which is value equality
 * only for primitive keys: an object key would be found only through the very same object,
 * and a restore decodes new objects, so every entry would be written again beside the
 * restored one. Flink compares map keys by value (serialized, or by equals).
 */
export function objectMapKeyProblem(key: object): string {
  const shown = previewValue(key, 60);
  return (
    `the key ${shown} is an object, and map keys must be strings, numbers, bigints or booleans ` +
    '(objects compare by identity, so the entry would not be found again, nor after a restore): use a string built from its fields, e.g. `${a}|${b}` or JSON.stringify(key)'
  );
}
