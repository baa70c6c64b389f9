/**
 * A value for one column, as the pg client sends it: strings, numbers, bigints, booleans,
 * dates and byte arrays as such; null as NULL; arrays as PostgreSQL arrays; other objects as
 * JSON (for json / jsonb columns).
 */
export type SqlValue = string | number | bigint | boolean | Date | Uint8Array | null | readonly SqlValue[] | { readonly [key: string]: unknown };

/**
 * How a record becomes a row, declared by the user in one of two forms:
 *
 * - columns and a function returning the values in that order:
 *   `{ columns: ['word', 'count'], toRow: (r) => [r.word, r.count] }`
 * - one function per column: `{ fields: { word: (r) => r.word, count: (r) => r.count } }`
 */
export type RowMapping<T, C extends string> =
  | { readonly columns: readonly C[]; readonly toRow: (value: T) => readonly SqlValue[] }
  | { readonly fields: { readonly [K in C]: (value: T) => SqlValue } };

/** What the sinks use: the column names and one function. */
export interface CompiledMapping<T> {
  readonly columns: readonly string[];
  readonly toRow: (value: T) => SqlValue[];
}

export function compileMapping<T, C extends string>(m: RowMapping<T, C>, what: string): CompiledMapping<T> {
  if ('columns' in m) {
    const columns = [...m.columns];
    checkColumns(columns, what);
    const toRow = m.toRow;
    return {
      columns,
      toRow: (value) => {
        const row = toRow(value);
        if (!Array.isArray(row) || row.length !== columns.length) {
          throw new Error(`${what}: toRow returned ${Array.isArray(row) ? `${row.length} values` : typeof row} for ${columns.length} columns (${columns.join(', ')})`);
        }
        return row as SqlValue[];
      },
    };
  }
  const entries = Object.entries(m.fields) as [string, (value: T) => SqlValue][];
  const columns = entries.map(([c]) => c);
  checkColumns(columns, what);
  for (const [c, f] of entries) if (typeof f !== 'function') throw new Error(`${what}: the field mapping of column '${c}' is not a function`);
  const fns = entries.map(([, f]) => f);
  return { columns, toRow: (value) => fns.map((f) => f(value)) };
}

function checkColumns(columns: readonly string[], what: string): void {
  if (columns.length === 0) throw new Error(`${what}: the row mapping declares no columns`);
  const seen = new Set<string>();
  for (const c of columns) {
    if (typeof c !== 'string' || c.length === 0) throw new Error(`${what}: a column name must be a non-empty string`);
    if (seen.has(c)) throw new Error(`${what}: column '${c}' is declared twice`);
    seen.add(c);
  }
}

/** Positions of the key columns among the columns; every key column must be declared. */
export function keyPositions(columns: readonly string[], keyColumns: readonly string[], what: string): number[] {
  if (keyColumns.length === 0) throw new Error(`${what}: keyColumns is empty; name the columns of the table's primary key or unique constraint`);
  return keyColumns.map((k) => {
    const i = columns.indexOf(k);
    if (i < 0) throw new Error(`${what}: key column '${k}' is not among the mapped columns (${columns.join(', ')})`);
    return i;
  });
}
