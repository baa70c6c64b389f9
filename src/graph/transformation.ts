import type { KeySelector } from '../api/functions.js';
import type { OutputTag } from '../api/output-tag.js';
import type { Source } from '../api/source.js';
import type { SourceWatermarksSpec } from '../runtime/task/source-watermarks.js';
import type { Partitioning } from '../runtime/channel/partitioner.js';
import type { KeyType } from '../runtime/state/key-group.js';
import type { StreamOperator } from '../runtime/task/stream-operator.js';

/** Settings every transformation has; set through the fluent API after creation. */
export interface TransformationSettings {
  name: string;
  uid: string | undefined;
  parallelism: number | undefined;
  maxParallelism: number | undefined;
  /** 'always' (default), 'head' (start a new chain here), 'never' (never chain). */
  chaining: 'always' | 'head' | 'never';
  /** Set for an operator that runs on one subtask only (windowAll): why its parallelism stays 1. */
  fixedParallelism?: string;
}

interface Base extends TransformationSettings {
  readonly id: number;
}

export interface SourceTransformation extends Base {
  readonly kind: 'source';
  readonly source: Source<unknown, unknown>;
  /** fromSource(source, watermarkStrategy, name): watermarks generated in the source, per split. */
  readonly watermarks?: SourceWatermarksSpec | undefined;
}

export interface OneInputTransformation extends Base {
  readonly kind: 'one-input';
  readonly input: Transformation;
  readonly operator: () => StreamOperator;
  readonly keySelector: KeySelector<unknown, KeyType> | undefined;
}

export interface TwoInputTransformation extends Base {
  readonly kind: 'two-input';
  readonly input1: Transformation;
  readonly input2: Transformation;
  readonly operator: () => StreamOperator;
  readonly keySelector1: KeySelector<unknown, KeyType> | undefined;
  readonly keySelector2: KeySelector<unknown, KeyType> | undefined;
}

/** Virtual: merges inputs into one stream. */
export interface UnionTransformation extends Base {
  readonly kind: 'union';
  readonly inputs: readonly Transformation[];
}

/** Virtual: sets how records move to the next operator. */
export interface PartitionTransformation extends Base {
  readonly kind: 'partition';
  readonly input: Transformation;
  readonly partitioning: Partitioning;
}

/** Virtual: the records an operator emitted to a side output. */
export interface SideOutputTransformation extends Base {
  readonly kind: 'side-output';
  readonly input: Transformation;
  readonly tag: OutputTag<unknown>;
}

export type Transformation =
  | SourceTransformation
  | OneInputTransformation
  | TwoInputTransformation
  | UnionTransformation
  | PartitionTransformation
  | SideOutputTransformation;

export type PhysicalTransformation = SourceTransformation | OneInputTransformation | TwoInputTransformation;

export function isPhysical(t: Transformation): t is PhysicalTransformation {
  return t.kind === 'source' || t.kind === 'one-input' || t.kind === 'two-input';
}
