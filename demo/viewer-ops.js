// The model viewer's worker operations (merged into worker.js's ops): they read the header of the
// file the worker holds, so the page never receives a whole 128k-token vocabulary to search.
import { overviewOf, metaRows, metaArrayPage, vocabOf, searchVocab, tokenText, TOKEN_TYPES } from './viewer-data.js';

/**
 * The viewer's operations as messages, by name: what the page sends and what it gets back.
 * @typedef {ReturnType<typeof viewerOps>} ViewerHandlers
 * @typedef {{ [K in keyof ViewerHandlers]: { args: Parameters<ViewerHandlers[K]>[0],
 *   result: Awaited<ReturnType<ViewerHandlers[K]>> } }} ViewerOps
 * @typedef {<K extends keyof ViewerOps>(op: K, args?: ViewerOps[K]['args']) => Promise<ViewerOps[K]['result']>} ViewerCall
 *   the page's RPC for them (app.js)
 */

/** Rows of the vocabulary sent per request at most. */
const PAGE = 500;

/**
 * The viewer's operations over the open file.
 * @param {() => import('./worker.js').OpenFile | null} current returns the worker's open file
 *   (openGGUF's result) or null
 */
export function viewerOps(current) {
  /** @type {{ file: import('./worker.js').OpenFile, vocab: ReturnType<typeof vocabOf> } | null} */
  let cache = null;
  const file = () => {
    const f = current();
    if (!f) throw new Error('no file is open');
    return f;
  };
  const vocab = () => {
    const f = file();
    if (!cache || cache.file !== f) cache = { file: f, vocab: vocabOf(f.kv) };
    return cache.vocab;
  };
  /** Last search's matches, kept for paging. */
  /** @type {{ file: unknown, query: string, ids: Int32Array }} */
  let last = { file: null, query: '', ids: new Int32Array(0) };
  return {
    /** The overview numbers (see overviewOf) and the shard count. */
    async overview() {
      const f = file();
      return { ...overviewOf(f), shards: f.shards ?? 1 };
    },
    /** Metadata rows matching query. @param {{ query?: string }} a */
    async meta({ query = '' }) {
      return metaRows(file().kv, String(query));
    },
    /** A page of an array value. @param {{ key: string, offset?: number, count?: number }} a */
    async metaArray({ key, offset = 0, count = 100 }) {
      return metaArrayPage(file().kv, String(key), Number(offset), Math.min(Number(count), 1000));
    },
    /** The full text of a string value (the chat template). @param {{ key: string }} a */
    async metaString({ key }) {
      const e = file().kv.find((x) => x.key === key);
      if (!e || typeof e.value !== 'string') throw new RangeError(`${key} is not a string in this file`);
      return e.value;
    },
    /**
     * Searches the vocabulary (see searchVocab) and returns the number of matches and rows
     * [offset, offset + count) of them: id, token shown faithfully, UTF-8 hex, score, type.
     * @param {{ query?: string, offset?: number, count?: number }} a
     */
    async vocab({ query = '', offset = 0, count = 100 }) {
      const v = vocab();
      const f = file();
      if (last.file !== f || last.query !== query) last = { file: f, query, ids: searchVocab(v.tokens, String(query)) };
      const from = Math.max(0, Math.min(last.ids.length, Math.floor(Number(offset)) || 0));
      const to = Math.min(last.ids.length, from + Math.min(PAGE, Math.max(0, Math.floor(Number(count)) || 0)));
      const rows = [];
      for (let k = from; k < to; k++) {
        const id = last.ids[k];
        const t = tokenText(v.tokens[id]);
        const type = v.types ? Number(v.types[id]) : null;
        rows.push({
          id,
          token: v.tokens[id],
          ...t,
          score: v.scores ? Number(v.scores[id]) : null,
          type: type === null ? '' : (TOKEN_TYPES[type] ?? String(type)),
        });
      }
      return { total: last.ids.length, size: v.tokens.length, model: v.model, offset: from, rows };
    },
  };
}
