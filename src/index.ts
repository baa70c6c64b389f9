/** Sluice: the public API for job authors. */
export { defineJob, isJobDefinition, type JobDefinition } from './api/define-job.js';
export { StreamExecutionEnvironment, type CheckpointingMode, type CheckpointingOptions } from './api/environment.js';
export { DataStream, SingleOutputStream, DataStreamSink } from './api/data-stream.js';
export { KeyedStream } from './api/keyed-stream.js';
export { CountWindowedStream } from './api/count-windowed-stream.js';
export { AllWindowedStream, type ProcessAllWindowFunction, type AllWindowMapFunction, type AllWindowResultFunction } from './api/all-windowed-stream.js';
export { WindowedStream } from './api/windowed-stream.js';
export { ConnectedStreams, ConnectedKeyedStreams } from './api/connected-streams.js';
export { IntervalJoin, IntervalJoined } from './api/interval-join.js';
export {
  ContinuousEventTimeTrigger,
  ContinuousProcessingTimeTrigger,
  CountTrigger,
  EventTimeTrigger,
  NeverTrigger,
  ProcessingTimeTrigger,
  PurgingTrigger,
  type Trigger,
  type TriggerContext,
  type TriggerResult,
} from './api/triggers.js';
export { CountEvictor, DeltaEvictor, TimeEvictor, type Evictor, type EvictorContext, type TimestampedValue } from './api/evictors.js';
export { CoGroupedStreams, CoGroupWindow, KeysWhere, KeysEqualTo, type CoGroupFunction } from './api/co-grouped-streams.js';
export { JoinedStreams, JoinWindow, type JoinFunction, type FlatJoinFunction } from './api/joined-streams.js';
export { BroadcastStream, BroadcastConnectedStream, KeyedBroadcastConnectedStream } from './api/broadcast-stream.js';
export { AsyncDataStream, DEFAULT_ASYNC_CAPACITY, type AsyncFunctionLike } from './api/async-data-stream.js';
export { AsyncRetryStrategies, AsyncRetryStrategyBuilder, RetryPredicates, type AsyncRetryStrategy } from './api/async-retry-strategy.js';
export { AsyncTimeoutError } from './runtime/operators/async-wait-operator.js';
export { broadcastState, type BroadcastStateDescriptor, type BroadcastState, type ReadOnlyBroadcastState } from './api/broadcast-state.js';
export { OutputTag } from './api/output-tag.js';
export type * from './api/functions.js';
export type { Source, SourceReader, ReaderOutput, SourceOutput, SourceReaderContext, InputStatus, Boundedness } from './api/source.js';
export type { Sink, SinkWriter, SinkWriterContext } from './api/sink.js';
export {
  WatermarkStrategy,
  BoundedOutOfOrdernessWatermarks,
  type WatermarkGenerator,
  type WatermarkOutput,
  type TimestampAssigner,
} from './api/watermark-strategy.js';
export {
  TumblingEventTimeWindows,
  TumblingProcessingTimeWindows,
  SlidingEventTimeWindows,
  SlidingProcessingTimeWindows,
  EventTimeSessionWindows,
  ProcessingTimeSessionWindows,
  GlobalWindows,
  type TimeWindow,
  type WindowAssigner,
  type TimeWindowAssigner,
  type GlobalWindowAssigner,
  type SessionWindowTimeGapExtractor,
} from './api/windows.js';
export type { ProcessWindowFunction, WindowContext, WindowMapFunction, WindowResultFunction } from './api/window-functions.js';
export {
  valueState,
  listState,
  mapState,
  reducingState,
  aggregatingState,
  operatorListState,
  type ValueState,
  type ListState,
  type MapState,
  type ReducingState,
  type AggregatingState,
  type AggregateFunction,
  type StateTtlConfig,
  type ValueStateDescriptor,
  type ListStateDescriptor,
  type MapStateDescriptor,
  type ReducingStateDescriptor,
  type AggregatingStateDescriptor,
  type OperatorListStateDescriptor,
} from './api/state-descriptors.js';
export { MsgpackSerializer, SerializationError, type TypeSerializer } from './runtime/state/serializer.js';
export type { KeyType } from './runtime/state/key-group.js';
export { Configuration, ConfigError } from './config/configuration.js';
export { NonRecoverableError, nonRecoverable, type ThrowableType } from './runtime/recovery/non-recoverable-error.js';
export { JobExecutionError, type JobResult, type JobProgress, type LocalExecutorOptions } from './runtime/local-executor.js';
export type { JobClient } from './api/environment.js';
export { CollectionSource } from './connectors/collection-source.js';
export { TwoPhaseCommitSink, type TwoPhaseCommitState, type TwoPhaseCommitContext } from './api/two-phase-commit-sink.js';
export { WriteAheadSink, InMemoryCheckpointCommitter, END_OF_INPUT_CHECKPOINT_ID, type CheckpointCommitter, type PendingCheckpointValues } from './api/write-ahead-sink.js';
export { CollectResultIterator } from './api/collect-result-iterator.js';
export { FaultPlan, InjectedFault, type Fault, type FaultPlanOptions } from './testing/fault-plan.js';
export type { CheckpointStatsEntry } from './runtime/checkpoint/checkpoint-stats.js';
