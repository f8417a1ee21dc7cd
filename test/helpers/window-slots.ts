import {
  SLOT_FAILURE,
  SLOT_OVERLOAD,
  SLOT_SHED,
  SLOT_SLOW,
  SLOT_SUCCESS,
} from '../../lib/core/window/outcome-window.interface.js';

/** Every outcome a window can record, for the windows' property suites. */
export const WINDOW_SLOTS = [
  SLOT_SUCCESS,
  SLOT_FAILURE,
  SLOT_SUCCESS | SLOT_SLOW,
  SLOT_FAILURE | SLOT_SLOW,
  SLOT_OVERLOAD,
  SLOT_SHED,
];
