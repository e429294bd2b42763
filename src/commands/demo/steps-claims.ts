import type { TourStep } from './tour.js';

/** Tour steps of the claims commands (filled in by the claims issue). */
export const steps: TourStep[] = [];
