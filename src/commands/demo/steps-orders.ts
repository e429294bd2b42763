import type { TourStep } from './tour.js';

/** Tour steps of the orders commands (filled in by the orders issue). */
export const steps: TourStep[] = [];
