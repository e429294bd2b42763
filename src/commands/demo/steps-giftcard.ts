import type { TourStep } from './tour.js';

/** Tour steps of the giftcard commands (filled in by the giftcard issue). */
export const steps: TourStep[] = [];
