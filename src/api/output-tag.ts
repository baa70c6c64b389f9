let nextTagId = 0;

/** Names a side output of an operator; `T` is the type of its records. */
export class OutputTag<T> {
  /** Phantom field carrying T. */
  declare readonly __type: T;
  readonly tagId: number;
  constructor(readonly id: string) {
    if (!id) throw new Error('an OutputTag needs a non-empty id');
    this.tagId = nextTagId++;
  }
}
