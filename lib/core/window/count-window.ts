import { SLOT_COUNTED, SLOT_EMPTY, SLOT_FAILURE, SLOT_OVERLOAD, SLOT_SLOW, type OutcomeWindow } from './outcome-window.interface.js';

/**
 * The last `size` outcomes in a ring buffer of one byte per slot: it opens
 * quickly under high load and slowly under low load.
 *
 * @internal
 */
export class CountWindow implements OutcomeWindow {
  calls = 0;
  failures = 0;
  slowCalls = 0;
  overloads = 0;
  shed = 0;
  private readonly slots: Uint8Array;
  private next = 0;

  constructor(size: number) {
    this.slots = new Uint8Array(size);
  }

  record(slot: number, _now: number): void {
    const slots = this.slots;
    const i = this.next;
    const old = slots[i]!;
    if (old !== SLOT_EMPTY) this.count(old, -1);
    slots[i] = slot;
    this.count(slot, 1);
    this.next = i + 1 === slots.length ? 0 : i + 1;
  }

  refresh(_now: number): void {}

  reset(): void {
    this.slots.fill(0);
    this.next = 0;
    this.calls = this.failures = this.slowCalls = this.overloads = this.shed = 0;
  }

  private count(slot: number, delta: number): void {
    if (slot & SLOT_COUNTED) {
      this.calls += delta;
      if (slot & SLOT_FAILURE) this.failures += delta;
      if (slot & SLOT_SLOW) this.slowCalls += delta;
    } else if (slot & SLOT_OVERLOAD) this.overloads += delta;
    else this.shed += delta;
  }
}
