/**
 * The configuration of a fault-injection test: checkpoints every 20 ms and restarts that do
 * not run out (50, 5 ms apart), so a seeded FaultPlan's failures are all recovered from.
 */
export function failoverConfig(parallelism: number): Record<string, number | string> {
  return {
    'parallelism.default': parallelism,
    'execution.checkpointing.interval': 20,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 50,
    'restart-strategy.fixed-delay.delay': 5,
  };
}
