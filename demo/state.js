// What the page shows: the open file, the analysed tensor and its analysis, and the view's
// choices (format, heatmap value, colour scale, the block under the cursor). One object, shared by
// the page's modules (app.js opens and links, tensor-view.js draws).

/**
 * @typedef {import('./worker.js').OpenResult} OpenResult
 * @typedef {import('./worker.js').AnalyzeResult} AnalyzeResult
 */

/**
 * @type {{ file: OpenResult | null, label: string, selected: string | null, analysis: AnalyzeResult | null,
 *   format: string, metric: string, scale: string, cursor: number }}
 */
export const state = {
  file: null,
  label: '',
  selected: null,
  analysis: null,
  format: 'q4_0',
  metric: 'rmse',
  scale: 'linear',
  cursor: 0,
};
