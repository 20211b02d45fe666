// The page's small DOM helpers: a query, an element builder, a wait for the next frame, and how
// numbers go into data attributes. Main thread only.

export const $ = (/** @type {string} */ s) => /** @type {HTMLElement} */ (document.querySelector(s));
/**
 * An element with attributes (text: its text; a function: the listener of the event its key names
 * after 'on') and children.
 * @param {string} tag
 * @param {Record<string, string | EventListener>} [attrs]
 * @param {...(Node | string)} kids
 */
export const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
};

/** Resolves in a new task after the next frame is drawn (or after 100 ms when no frame comes: a hidden tab). */
export const nextFrame = () =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, 100);
    requestAnimationFrame(() =>
      setTimeout(() => {
        clearTimeout(t);
        resolve(undefined);
      }, 0),
    );
  });

/** A byte as two hex digits. */

export const hex = (/** @type {number} */ b) => b.toString(16).padStart(2, '0');
/** A number for a data attribute, keeping the sign of zero (String(-0) is "0"). */
export const numAttr = (/** @type {number} */ v) => (Object.is(v, -0) ? '-0' : String(v));
