import { describe, expectTypeOf, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { isUnchangedToast, postgresCdcSource, type ChangeRecord, type UnchangedToast } from '../src/connectors/index.js';

interface Order {
  id: number;
  qty: bigint;
  note: string | null;
}
interface Customer {
  id: number;
  name: string;
}

describe('postgresCdcSource types', () => {
  it('rows are typed per table; the record narrows on table and op', () => {
    const env = StreamExecutionEnvironment.create();
    const changes = env
      .fromSource(postgresCdcSource<{ 'public.orders': Order; customers: Customer }>({ slot: 's', publication: 'p', tables: ['public.orders', 'customers'] }), 'cdc')
      .setParallelism(1);
    changes.map((c) => {
      if (c.table === 'public.orders') {
        expectTypeOf(c).toEqualTypeOf<ChangeRecord<Order, 'public.orders'>>();
        if (c.op === 'c') expectTypeOf(c.after.qty).toEqualTypeOf<bigint>();
        if (c.op === 'u') {
          expectTypeOf(c.after.note).toEqualTypeOf<string | null | UnchangedToast>();
          expectTypeOf(c.before).toEqualTypeOf<Partial<Order> | null>();
          const note = c.after.note;
          if (!isUnchangedToast(note)) expectTypeOf(note).toEqualTypeOf<string | null>();
        }
        if (c.op === 'd') expectTypeOf(c.after).toEqualTypeOf<null>();
      } else {
        expectTypeOf(c.table).toEqualTypeOf<'customers'>();
        if (c.op === 'c') expectTypeOf(c.after.name).toEqualTypeOf<string>();
      }
      expectTypeOf(c.source.commitLsn).toEqualTypeOf<string>();
      return c.op;
    });
    // @ts-expect-error a table not in the row types
    postgresCdcSource<{ 'public.orders': Order }>({ slot: 's', publication: 'p', tables: ['public.order'] });
  });
});
