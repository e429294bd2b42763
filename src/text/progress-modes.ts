/** The values of `--progress` and of the `progress` setting (src/text/progress.ts draws them); a leaf module, so the settings schema can take them. */
export const PROGRESS_MODES = ['auto', 'plain', 'none'] as const;
export type ProgressMode = (typeof PROGRESS_MODES)[number];
