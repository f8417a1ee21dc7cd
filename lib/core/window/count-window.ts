import {
  SLOT_COUNTED,
  SLOT_EMPTY,
  SLOT_FAILURE,
  SLOT_OVERLOAD,
  SLOT_SLOW,
  SLOT_SUCCESS,
  type OutcomeWindow,
} from './outcome-window.interface.js';

// Ten 3-bit codes per word keep each word a small integer (30 bits), which V8
// stores unboxed in a plain array: 100 outcomes take 10 words (about 64 bytes
// with the array), where a Uint8Array would cost over 250.
const SLOTS_PER_WORD = 10;
const BITS = 3;
const MASK = 0b111;

// Slot flags (success, failure, slow, overload, shed) ↔ 3-bit codes.
const CODE_OF_FLAGS: Record<number, number> = { 0: 0, 1: 1, 2: 2, 5: 3, 6: 4, 8: 5, 16: 6 };
const FLAGS_OF_CODE = [SLOT_EMPTY, 1, 2, 5, 6, 8, 16];

/**
 * The last `size` outcomes in a ring buffer: it opens quickly under high load
 * and slowly under low load.
 *
 * @internal
 */
export class CountWindow implements OutcomeWindow {
  calls = 0;
  failures = 0;
  slowCalls = 0;
  overloads = 0;
  shed = 0;
  private readonly words: number[];
  private index = 0;

  constructor(private readonly size: number) {
    this.words = Array.from({ length: Math.ceil(size / SLOTS_PER_WORD) }, () => 0);
  }

  record(slot: number, _now: number): void {
    // A full window of plain successes is unchanged by one more, whichever slot it replaces:
    // the closed path of a healthy dependency skips the ring.
    if (
      slot === SLOT_SUCCESS &&
      this.calls === this.size &&
      this.failures === 0 &&
      this.slowCalls === 0
    )
      return;
    const index = this.index;
    // Derived rather than stored: two fewer fields on every breaker.
    const word = (index / SLOTS_PER_WORD) | 0;
    const shift = (index - word * SLOTS_PER_WORD) * BITS;
    const words = this.words;
    const current = words[word]!;
    const old = (current >>> shift) & MASK;
    if (old !== 0) this.count(FLAGS_OF_CODE[old]!, -1);
    words[word] = (current & ~(MASK << shift)) | (CODE_OF_FLAGS[slot]! << shift);
    this.count(slot, 1);
    this.index = index + 1 === this.size ? 0 : index + 1;
  }

  refresh(_now: number): void {}

  reset(): void {
    this.words.fill(0);
    this.index = 0;
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
