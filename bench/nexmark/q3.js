// Nexmark q3, local item suggestion: who sells in category 10 in Oregon, Idaho or California.
//   SELECT P.name, P.city, P.state, A.id FROM auction AS A INNER JOIN person AS P on A.seller = P.id
//   WHERE A.category = 10 and (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')
// A regular (unwindowed) join: a person is kept forever; an auction whose seller has not
// registered yet (the generator lets a few refer to people not yet created) waits for them.
import { listState, valueState } from 'sluice';
import { line } from './common.js';

const STATES = new Set(['OR', 'ID', 'CA']);

export default {
  name: 'q3',
  title: 'local item suggestion',
  build(events) {
    const persons = events.filter((e) => e.kind === 'person' && STATES.has(e.state));
    const auctions = events.filter((e) => e.kind === 'auction' && e.category === 10);
    return persons
      .keyBy((p) => p.id)
      .connect(auctions.keyBy((a) => a.seller))
      .process({
        open(ctx) {
          this.person = ctx.getState(valueState('person'));
          this.waiting = ctx.getState(listState('auctions-waiting'));
        },
        processElement1(p, _ctx, out) {
          const seller = { name: p.name, city: p.city, state: p.state };
          this.person.update(seller);
          for (const id of this.waiting.get()) out.collect({ ...seller, id });
          this.waiting.clear();
        },
        processElement2(a, _ctx, out) {
          const seller = this.person.value();
          if (seller === undefined) this.waiting.add(a.id);
          else out.collect({ name: seller.name, city: seller.city, state: seller.state, id: a.id });
        },
      });
  },
  format: (r) => line(r.name, r.city, r.state, r.id),
};
