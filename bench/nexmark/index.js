// The Nexmark queries (nexmark/nexmark's nexmark-flink/src/main/resources/queries/q*.sql), one
// module a query, each a job fragment written with Sluice's DataStream API: `build(events,
// options)` takes the stream of Nexmark events (timestamps from their dateTime, watermarks
// bounded by 0 ms of out-of-orderness) and returns the query's result stream; `format(record)`
// is the result's normalized output line (fields joined by '|'), the same as bench/flink's.
//
// Where Nexmark's SQL is an updating query (a regular join's or an unwindowed GROUP BY's
// changelog, a ROW_NUMBER top-N), the module emits the final result once, at the end of the
// input (common.js END_OF_INPUT); where SQL leaves an order of equal rows open, common.js
// decides it, so the result does not depend on arrival order.
import q0 from './q0.js';
import q1 from './q1.js';
import q2 from './q2.js';
import q3 from './q3.js';
import q4 from './q4.js';
import q5 from './q5.js';
import q6 from './q6.js';
import q7 from './q7.js';
import q8 from './q8.js';
import q9 from './q9.js';
import q10 from './q10.js';
import q11 from './q11.js';
import q12 from './q12.js';
import q13 from './q13.js';
import q14 from './q14.js';
import q15 from './q15.js';
import q16 from './q16.js';
import q17 from './q17.js';
import q18 from './q18.js';
import q19 from './q19.js';
import q20 from './q20.js';
import q21 from './q21.js';
import q22 from './q22.js';

export const nexmarkQueries = Object.fromEntries(
  [q0, q1, q2, q3, q4, q5, q6, q7, q8, q9, q10, q11, q12, q13, q14, q15, q16, q17, q18, q19, q20, q21, q22].map((q) => [q.name, q]),
);
