import type { TourStep } from './tour.js';

/** Tour steps of the auth commands (filled in by the auth issue). */
export const steps: TourStep[] = [];
