// The house plan of pervasim: a live view of the simulated home, drawn to
// scale in SVG, that talks to the REST API under the platform root and
// follows its event stream. Plain ES module, no dependencies.

const SVGNS = 'http://www.w3.org/2000/svg';

// The platform root, such as "platform" or "../platform": the server writes
// it into the page, relative to the page's own URL.
const ROOT = (document.querySelector('meta[name="platform-root"]')?.getAttribute('content') || 'platform').replace(/\/+$/, '');

const LABELS = {
  'heater.powerLevel': 'Power level',
  'heater.maxPowerLevel': 'Maximum power',
  'heater.updaterThread.period': 'Update period',
  'cooler.powerLevel': 'Power level',
  'cooler.maxPowerLevel': 'Maximum power',
  'cooler.updaterThread.period': 'Update period',
  current_temperature: 'Temperature',
  current_illuminance: 'Illuminance',
  power_level: 'Power level',
  max_power: 'Maximum power',
  max_illuminance: 'Maximum illuminance',
  power_status: 'On',
  sensed_presence: 'Presence sensed',
  push_and_hold: 'Pushed',
  current_status: 'On',
  current_concentration: 'Concentration',
  luminous_efficacy: 'Luminous efficacy',
};

// kindSpecs returns the property specs of a device's kind, as the server
// serves them at /devices/kinds: name, type, default, min, max, derived,
// unit, doc. Kinds registered by the user come with their own.
function kindSpecs(type) {
  const k = model.kinds.get(type) || [...model.kinds.values()].find((v) => v.name.toLowerCase() === kindOf(type).toLowerCase());
  return (k?.properties || []).map((p) => ({
    ...p, step: p.type === 'number' && p.min === 0 && p.max === 1 ? 0.05 : undefined,
  }));
}

// labelOf returns a readable label for a property: a known one, or the
// name with its prefix dropped and its words split.
function labelOf(name) {
  if (Object.hasOwn(LABELS, name)) return LABELS[name];
  const last = name.split('.').pop().replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return last.charAt(0).toUpperCase() + last.slice(1);
}

// Properties every device has, edited apart from the kind's own.
const COMMON_PROPS = new Set(['state', 'fault', 'Location']);

const PERSON_COLORS = {
  Grandfather: '#5f3dc4', Grandmother: '#9c36b5', Father: '#1864ab', Mother: '#c2255c',
  Boy: '#0b7285', Girl: '#d9480f', 'Old man': '#5c940d', 'Old woman': '#a61e4d',
  Man: '#364fc7', Woman: '#e64980',
};

const EVENT_TYPES = [
  'zone-added', 'zone-removed', 'zone-moved', 'zone-resized', 'zone-updated', 'zone-parent-updated',
  'zone-variable-added', 'zone-variable-updated', 'zone-variable-removed',
  'device-added', 'device-removed', 'device-position-update', 'device-updated',
  'device-property-added', 'device-property-updated', 'device-property-removed', 'device-event',
  'person-added', 'person-removed', 'person-position-update', 'person-updated',
  'clock-modified',
  'script-added', 'script-removed', 'script-updated', 'script-started', 'script-paused',
  'script-resumed', 'script-stopped',
];

// ---------------------------------------------------------------- model

const model = {
  zones: new Map(),
  devices: new Map(),
  persons: new Map(),
  scripts: new Map(),
  deviceTypes: [],
  kinds: new Map(),
  personTypes: [],
};

// The clock as last read: simulated ms at performance.now() `at`, and the
// offset of the server's time zone (from its date strings), in ms, at the
// current time and at the start date: they differ when daylight saving time
// began or ended in between.
const clock = { time: NaN, at: 0, factor: 1, pause: true, offset: 0, startOffset: 0 };

const ui = {
  selected: null,     // {entity: 'zone'|'device'|'person', id}
  drag: null,         // the drag under way
  script: '',         // the id of the chosen script
  viewBox: [0, 0, 800, 600],
  unit: 1,            // plan units per icon unit
  syncing: false,     // a full re-fetch is under way
  buffered: [],       // events received meanwhile
  source: null,       // the EventSource
  problem: '',        // why the page cannot read the home, such as a missing token
  loaded: false,      // the home was read once
};

// ---------------------------------------------------------------- helpers

const $ = (sel, el = document) => el.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  for (const c of children.flat()) {
    if (c == null || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function svg(tag, attrs = {}) {
  const e = document.createElementNS(SVGNS, tag);
  setAttrs(e, attrs);
  return e;
}

function setAttrs(e, attrs) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
}

function setAttr(e, name, value) {
  const v = String(value);
  if (e.getAttribute(name) !== v) e.setAttribute(name, v);
}

function setText(e, text) {
  if (e.textContent !== text) e.textContent = text;
}

const kindOf = (type) => String(type || '').split('.').pop();
// isPlaced reports whether a device or person is on the plan. One not
// placed is at -1,-1 and in no zone; one at -1,-1 in a zone covering that
// point (a plan with negative coordinates) is placed there.
const isPlaced = (o) => !(o.positionX === -1 && o.positionY === -1) || (!!o.location && o.location !== 'unknown');
const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const fmtC = (k) => (typeof k === 'number' ? `${(k - 273.15).toFixed(1)} °C` : '– °C');
const fmtLux = (v) => (typeof v === 'number' ? `${Math.round(v)} lx` : '– lx');
const displayName = (o) => o.name || o.id;
// own returns o's own property k: a property or variable may be named
// "constructor" or "toString", which every object inherits.
const own = (o, k) => (o != null && Object.hasOwn(o, k) ? o[k] : undefined);

function fmtNumber(v) {
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return String(v);
  return String(Math.round(v * 1000) / 1000);
}

class ApiError extends Error {
  constructor(message, status, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// The server's token, when it was started with -token: given once in the
// page's address (/simulator#token=…), kept for the tab's session, and
// dropped from the address so that it shows nowhere.
const TOKEN = (() => {
  const m = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (m) {
    try { sessionStorage.setItem('pervasim-token', decodeURIComponent(m[1])); } catch { /* storage off */ }
    history.replaceState(null, '', location.pathname + location.search);
    return decodeURIComponent(m[1]);
  }
  try { return sessionStorage.getItem('pervasim-token') || ''; } catch { return ''; }
})();

async function api(method, path, body) {
  const init = { method, headers: { Accept: 'application/json' } };
  if (TOKEN) init.headers.Authorization = `Bearer ${TOKEN}`;
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(`${ROOT}${path}`, init);
  } catch (err) {
    throw new ApiError(`cannot reach the server (${err.message})`, 0, 'network');
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    throw new ApiError(data?.error || `${res.status} ${res.statusText}`, res.status, data?.code);
  }
  return data;
}

const enc = encodeURIComponent;

let toastTimer = 0;
function toast(message, kind = 'error') {
  const t = $('#toast');
  t.textContent = message;
  t.dataset.kind = kind;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, 6000);
}

function showError(elem, err) {
  if (!elem) return toast(err.message || String(err));
  elem.textContent = err ? (err.message || String(err)) : '';
  elem.hidden = !err;
}

// ---------------------------------------------------------------- rendering

// Rendering is incremental: a change of the model marks what it changed
// (change, touch), and the next frame redraws only that, and what depends on
// it: a zone's label when an icon moves in or out of its corners, the view
// box when something moves, appears or goes. Everything is redrawn only
// after a full re-fetch or when the view box's scale changes, since icons,
// strokes and labels are drawn to it.
const dirty = {
  all: true,          // redraw everything
  bounds: true,       // the view box may have changed
  zones: new Set(),   // ids to redraw
  devices: new Set(),
  persons: new Set(),
  zoneOrder: false,   // zones appeared, went or changed size
  deviceOrder: false, // devices appeared, went or were (un)placed
  personOrder: false,
  lists: true,        // the side lists may have changed
};

function markAll() {
  dirty.all = true;
  dirty.bounds = true;
  dirty.lists = true;
  scheduleRender();
}

const dirtyIds = (entity) => ({ zone: dirty.zones, device: dirty.devices, person: dirty.persons }[entity]);

// touch redraws one zone, device or person at the next frame, the model
// unchanged (its selection, or the end of a drag).
function touch(entity, id) {
  dirtyIds(entity)?.add(id);
  scheduleRender();
}

// change puts obj as the zone, device or person id in the model, or removes
// it when obj is undefined, and marks what that changes on the plan.
function change(entity, id, obj) {
  const coll = collection(entity);
  const old = coll.get(id);
  if (obj) coll.set(id, obj);
  else coll.delete(id);
  dirtyIds(entity).add(id);
  if (entity === 'zone') {
    dirty.lists = true;
    if (!old || !obj || old.leftX !== obj.leftX || old.topY !== obj.topY || old.rightX !== obj.rightX || old.bottomY !== obj.bottomY) {
      dirty.bounds = true;
      dirty.zoneOrder = true;
    }
  } else {
    const was = !!old && isPlaced(old), is = !!obj && isPlaced(obj);
    if (was !== is) dirty[`${entity}Order`] = true;
    if (entity === 'person' || !was || !is || old?.name !== obj?.name) dirty.lists = true;
    if (!old || !obj || old.positionX !== obj.positionX || old.positionY !== obj.positionY) {
      dirty.bounds = true;
      iconMoved(entity, old, obj);
    }
  }
  scheduleRender();
}

let renderPending = false;
function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(doRender);
  setTimeout(doRender, 150); // when frames do not run (a hidden tab)
}
function doRender() {
  if (!renderPending) return;
  renderPending = false;
  render();
}

function render() {
  if (dirty.bounds && !ui.drag) {
    dirty.bounds = false;
    const unit = ui.unit;
    computeViewBox();
    if (ui.unit !== unit) dirty.all = true;
  }
  renderEmpty();
  const all = dirty.all;
  dirty.all = false;
  if (all) zoneBoxes.clear();
  renderZones(all);
  renderIcons('device', all, deviceEls, renderDevice);
  renderIcons('person', all, personEls, renderPerson);
  if (dirty.lists || all) {
    dirty.lists = false;
    renderLists();
  }
  renderScripts();
  refreshInspector();
}

// computeViewBox fits the view box to the zones, devices and persons.
function computeViewBox() {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const z of model.zones.values()) {
    if (z.leftX < x0) x0 = z.leftX;
    if (z.topY < y0) y0 = z.topY;
    if (z.rightX > x1) x1 = z.rightX;
    if (z.bottomY > y1) y1 = z.bottomY;
  }
  for (const m of [model.devices, model.persons]) {
    for (const o of m.values()) {
      if (!isPlaced(o)) continue;
      const x = o.positionX, y = o.positionY;
      if (x < x0) x0 = x;
      if (y < y0) y0 = y;
      if (x > x1) x1 = x;
      if (y > y1) y1 = y;
    }
  }
  let vb;
  if (!Number.isFinite(x0)) {
    vb = [0, 0, 800, 600];
  } else {
    let w = Math.max(x1 - x0, 200), h = Math.max(y1 - y0, 150);
    const pad = Math.max(w, h) * 0.05 + 16;
    vb = [x0 - pad - (w - (x1 - x0)) / 2, y0 - pad - (h - (y1 - y0)) / 2, w + 2 * pad, h + 2 * pad];
  }
  ui.viewBox = vb;
  ui.unit = Math.max(vb[2], vb[3]) / 800;
  setAttr($('#plan'), 'viewBox', vb.map((v) => Math.round(v * 100) / 100).join(' '));
}

// renderEmpty says why the plan is empty, if it is.
let emptySig = '';
function renderEmpty() {
  const vb = ui.viewBox;
  const sig = `${model.zones.size > 0}|${ui.problem}|${ui.loaded}|${vb}|${ui.unit}`;
  if (sig === emptySig) return;
  emptySig = sig;
  const empty = $('#plan-empty');
  setDisplay(empty, !model.zones.size);
  setText(empty, ui.problem || (ui.loaded ? 'No zones yet: add one from the side panel.' : 'Loading the home…'));
  setAttr(empty, 'x', vb[0] + vb[2] / 2);
  setAttr(empty, 'y', vb[1] + vb[3] / 2);
  setAttr(empty, 'font-size', 16 * ui.unit);
}

const zoneEls = new Map();
const deviceEls = new Map();
const personEls = new Map();

function zoneFill(z) {
  const k = z.variables?.Temperature;
  if (typeof k !== 'number') return 'hsl(210 20% 97%)';
  const c = k - 273.15;
  const t = Math.min(1, Math.max(0, (c - 14) / 12)); // 14 °C blue … 26 °C red
  const hue = 215 - t * 205;
  return `hsl(${hue.toFixed(0)} 75% 91%)`;
}

function zoneLight(z) {
  const lux = z.variables?.Illuminance;
  if (typeof lux !== 'number' || lux <= 0) return 0;
  return Math.min(1, Math.log10(1 + lux) / Math.log10(1 + 2000)) * 0.55;
}

const zoneArea = (z) => (z.rightX - z.leftX) * (z.bottomY - z.topY);

function renderZones(all) {
  const ids = all ? [...model.zones.keys()] : [...dirty.zones];
  dirty.zones.clear();
  for (const id of ids) renderZone(id);
  if (all || dirty.zoneOrder) {
    dirty.zoneOrder = false;
    // Larger zones first, so that a zone inside another stays visible.
    const zones = [...model.zones.values()].sort((a, b) => zoneArea(b) - zoneArea(a));
    syncLayer($('#zones-layer'), zoneEls, zones.map((z) => z.id));
  }
}

function renderZone(id) {
  const z = model.zones.get(id);
  let g = zoneEls.get(id);
  if (!z) {
    if (g) { g.remove(); zoneEls.delete(id); }
    zoneBoxes.delete(id);
    return;
  }
  const u = ui.unit;
  if (!g) {
    g = svg('g', { class: 'zone', 'data-entity': 'zone', 'data-id': z.id, 'data-testid': `zone-${z.id}`, tabindex: 0, role: 'button' });
    g.append(
      svg('title'),
      svg('rect', { class: 'zone-rect' }),
      svg('rect', { class: 'zone-light', fill: '#ffe066' }),
      svg('text', { class: 'zone-name' }),
      svg('text', { class: 'zone-var zone-temp', 'data-testid': `zone-temp-${z.id}` }),
      svg('text', { class: 'zone-var zone-lux', 'data-testid': `zone-lux-${z.id}` }),
    );
    zoneEls.set(z.id, g);
    $('#zones-layer').append(g);
    dirty.zoneOrder = true;
  }
  const [title, rect, light, name, temp, lux] = g.children;
  const w = z.rightX - z.leftX, h = z.bottomY - z.topY;
  for (const r of [rect, light]) {
    setAttr(r, 'x', z.leftX); setAttr(r, 'y', z.topY); setAttr(r, 'width', w); setAttr(r, 'height', h);
  }
  setAttr(rect, 'fill', zoneFill(z));
  setAttr(rect, 'stroke-width', 3 * u);
  setAttr(light, 'fill-opacity', zoneLight(z).toFixed(3));
  const vars = z.variables || {};
  const hasT = 'Temperature' in vars, hasL = 'Illuminance' in vars;
  // Each line is cut to the zone's width, the full name being in its title.
  const avail = Math.max(0, w - 14 * u);
  const lines = [[name, fitText(name, displayName(z), 15 * u, avail), 15 * u]];
  if (hasT) lines.push([temp, fitText(temp, fmtC(vars.Temperature), 13 * u, avail), 13 * u]);
  if (hasL) lines.push([lux, fitText(lux, fmtLux(vars.Illuminance), 13 * u, avail), 13 * u]);
  for (const [t, text, size] of lines) {
    setAttr(t, 'font-size', size);
    setText(t, text);
  }
  setDisplay(temp, hasT);
  setDisplay(lux, hasL);
  const width = Math.max(...lines.map(([t, text, size]) => textWidth(t, text, size)));
  layoutLabel(g, z, lines.map(([t]) => t), width, zoneObstacles(z, u), u);
  const label = `Zone ${displayName(z)}: ${hasT ? fmtC(vars.Temperature) : 'no temperature'}, ${hasL ? fmtLux(vars.Illuminance) : 'no illuminance'}`;
  setText(title, label);
  setAttr(g, 'aria-label', label);
  g.classList.toggle('selected', isSelected('zone', z.id));
}

function setDisplay(e, shown) {
  const v = shown ? '' : 'none';
  if (e.style.display !== v) e.style.display = v;
}

// Text is measured on a canvas, in the font its SVG text element has, read
// once per class: measuring the SVG text itself would lay out the page.
const measurer = document.createElement('canvas').getContext('2d');
const fonts = new Map();
const widths = new Map();

// textWidth returns the width, in plan units, of text in element t's font
// at size.
function textWidth(t, text, size) {
  const cls = t.getAttribute('class') || '';
  let font = fonts.get(cls);
  if (font === undefined) {
    const cs = getComputedStyle(t);
    font = `${cs.fontStyle} ${cs.fontWeight} 100px ${cs.fontFamily}`;
    fonts.set(cls, font);
  }
  const key = `${font}\n${text}`;
  let wd = widths.get(key);
  if (wd === undefined) {
    measurer.font = font;
    wd = measurer.measureText(text).width;
    if (widths.size > 10000) widths.clear();
    widths.set(key, wd);
  }
  return (wd * size) / 100;
}

// fitText returns text, or its longest beginning with an ellipsis that fits
// in width avail.
function fitText(t, text, size, avail) {
  if (textWidth(t, text, size) <= avail) return text;
  const chars = Array.from(text);
  const cut = (n) => `${chars.slice(0, n).join('').trimEnd()}…`;
  let lo = 0, hi = chars.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (textWidth(t, cut(mid), size) <= avail) lo = mid;
    else hi = mid - 1;
  }
  return cut(lo);
}

// The icons near each zone, which its label avoids, by zone id: kept until
// an icon moves near it (iconMoved) or the scale changes.
const zoneBoxes = new Map();

// iconBox returns the box of a placed device's or person's icon on the
// plan, at scale u.
function iconBox(entity, o, u) {
  const x = o.positionX, y = o.positionY;
  return entity === 'person'
    ? [x - 16 * u, y - 16 * u, x + 16 * u, y + 28 * u]
    : [x - 15 * u, y - 15 * u, x + 15 * u, y + 15 * u];
}

// nearZone returns the zone's box, grown by the most that its label may stick
// out of it.
function nearZone(z, u) {
  const m = 60 * u;
  return [z.leftX - m, z.topY - m, z.rightX + m, z.bottomY + m];
}

const overlap = (a, b) => a[0] < b[2] && a[2] > b[0] && a[1] < b[3] && a[3] > b[1];

function zoneObstacles(z, u) {
  const key = `${z.leftX},${z.topY},${z.rightX},${z.bottomY},${u}`;
  const cached = zoneBoxes.get(z.id);
  if (cached?.key === key) return cached.boxes;
  const near = nearZone(z, u);
  const boxes = [];
  for (const [entity, m] of [['device', model.devices], ['person', model.persons]]) {
    for (const o of m.values()) {
      if (!isPlaced(o)) continue;
      const b = iconBox(entity, o, u);
      if (overlap(b, near)) boxes.push(b);
    }
  }
  zoneBoxes.set(z.id, { key, boxes });
  return boxes;
}

// iconMoved redraws the labels of the zones near where an icon was or is.
function iconMoved(entity, old, obj) {
  const u = ui.unit;
  const boxes = [old, obj].filter((o) => o && isPlaced(o)).map((o) => iconBox(entity, o, u));
  if (!boxes.length) return;
  for (const z of model.zones.values()) {
    const near = nearZone(z, u);
    if (boxes.some((b) => overlap(b, near))) {
      zoneBoxes.delete(z.id);
      dirty.zones.add(z.id);
    }
  }
}

const LABEL_SPOTS = ['tl', 'tr', 'bl', 'br', 'tc', 'bc'];

// layoutLabel puts a zone's name and variables, width wide, in the corner of
// the zone that the fewest icons cover, keeping the current one on a tie.
function layoutLabel(g, z, lines, width, boxes, u) {
  const height = 17 * u + 16 * u * (lines.length - 1);
  const pad = 7 * u;
  const place = (spot) => {
    const x = spot[1] === 'l' ? z.leftX + pad : spot[1] === 'r' ? z.rightX - pad : (z.leftX + z.rightX) / 2;
    const x0 = spot[1] === 'l' ? x : spot[1] === 'r' ? x - width : x - width / 2;
    const y0 = spot[0] === 't' ? z.topY + pad : z.bottomY - pad - height;
    return { x, x0, y0, anchor: spot[1] === 'l' ? 'start' : spot[1] === 'r' ? 'end' : 'middle' };
  };
  const score = (p) => {
    const box = [p.x0, p.y0, p.x0 + width, p.y0 + height];
    return boxes.filter((b) => overlap(b, box)).length;
  };
  let best = g.dataset.spot || 'tl';
  let bestScore = score(place(best));
  for (const spot of LABEL_SPOTS) {
    if (bestScore === 0) break;
    const sc = score(place(spot));
    if (sc < bestScore) { best = spot; bestScore = sc; }
  }
  if (g.dataset.spot !== best) g.dataset.spot = best;
  const p = place(best);
  lines.forEach((t, i) => {
    setAttr(t, 'x', p.x);
    setAttr(t, 'y', p.y0 + 13 * u + 16 * u * i);
    setAttr(t, 'text-anchor', p.anchor);
  });
}

// syncLayer removes the elements of ids no longer there and puts the others
// in order.
function syncLayer(layer, els, ids) {
  const keep = new Set(ids);
  for (const [id, g] of els) {
    if (!keep.has(id)) { g.remove(); els.delete(id); }
  }
  let next = layer.firstElementChild;
  for (const id of ids) {
    const g = els.get(id);
    if (!g) continue;
    if (next === g) next = g.nextElementSibling;
    else layer.insertBefore(g, next);
  }
}

// placedIds returns the ids of the placed ones of m, in the model's order.
function placedIds(m) {
  const ids = [];
  for (const o of m.values()) if (isPlaced(o)) ids.push(o.id);
  return ids;
}

// renderIcons redraws the devices or persons marked, or all of them, with
// draw(id), and puts their layer in order when that may have changed.
function renderIcons(entity, all, els, draw) {
  const m = collection(entity), marks = dirtyIds(entity), order = `${entity}Order`;
  const ids = all ? [...m.keys()] : [...marks];
  marks.clear();
  for (const id of ids) draw(id);
  if (all || dirty[order]) {
    dirty[order] = false;
    syncLayer($(`#${entity}s-layer`), els, placedIds(m));
  }
}

// iconEl returns the element of device or person id, made by make(o) when
// new; when o is gone or not placed, it removes the element and returns null.
function iconEl(entity, id, o, els, make) {
  let g = els.get(id);
  if (!o || !isPlaced(o)) {
    if (g) { g.remove(); els.delete(id); }
    return null;
  }
  if (!g) {
    g = make(o);
    els.set(id, g);
    $(`#${entity}s-layer`).append(g);
    dirty[`${entity}Order`] = true;
  }
  return g;
}

function renderDevice(id) {
  const d = model.devices.get(id);
  const g = iconEl('device', id, d, deviceEls, () => {
    const e = svg('g', { class: `device kind-${kindOf(d.type).toLowerCase()}`, 'data-entity': 'device', 'data-id': d.id, 'data-testid': `device-${d.id}`, tabindex: 0, role: 'button' });
    e.append(svg('title'), svg('g', { class: 'icon' }), svg('text', { class: 'device-label', 'text-anchor': 'middle', 'data-testid': `device-label-${d.id}` }));
    return e;
  });
  if (!g) return;
  const [title, icon, name] = g.children;
  setText(name, displayName(d));
  setAttr(name, 'y', 28);
  const kind = kindOf(d.type);
  g.classList.toggle('deactivated', d.state === 'deactivated');
  g.classList.toggle('faulty', d.fault === 'yes');
  g.classList.toggle('selected', isSelected('device', d.id));
  if (ui.drag?.g !== g) placeIcon(g, d.positionX, d.positionY);
  const sig = iconSignature(d);
  if (icon.dataset.sig !== sig) {
    icon.innerHTML = deviceIcon(d);
    icon.dataset.sig = sig;
  }
  const label = `${displayName(d)} (${kind}${d.location ? `, in ${d.location}` : ''}): ${deviceSummary(d)}`;
  setText(title, label);
  setAttr(g, 'aria-label', label);
}

function renderPerson(id) {
  const p = model.persons.get(id);
  const g = iconEl('person', id, p, personEls, () => {
    const e = svg('g', { class: 'person', 'data-entity': 'person', 'data-id': p.id, 'data-testid': `person-${p.id}`, tabindex: 0, role: 'button' });
    e.append(svg('title'), svg('g', { class: 'icon' }), svg('text', { class: 'person-label', y: 24, 'text-anchor': 'middle' }));
    return e;
  });
  if (!g) return;
  const [title, icon, name] = g.children;
  g.classList.toggle('selected', isSelected('person', p.id));
  if (ui.drag?.g !== g) placeIcon(g, p.positionX, p.positionY);
  const sig = p.type;
  if (icon.dataset.sig !== sig) {
    icon.innerHTML = personIcon(p);
    icon.dataset.sig = sig;
  }
  setText(name, displayName(p));
  const label = `${displayName(p)} (${p.type}), ${p.location && p.location !== 'unknown' ? `in ${p.location}` : 'outside every zone'}`;
  setText(title, label);
  setAttr(g, 'aria-label', label);
}

function placeIcon(g, x, y) {
  setAttr(g, 'transform', `translate(${x} ${y}) scale(${(ui.unit).toFixed(4)})`);
}

function deviceSummary(d) {
  const p = d.properties || {};
  const parts = [d.state || 'activated'];
  if (d.fault === 'yes') parts.push('faulty');
  switch (kindOf(d.type)) {
    case 'Heater': parts.push(`power ${Math.round(num(p['heater.powerLevel']) * 100)}%`); break;
    case 'Cooler': parts.push(`power ${Math.round(num(p['cooler.powerLevel']) * 100)}%`); break;
    case 'DimmerLight': parts.push(`light ${Math.round(num(p.power_level) * 100)}%`); break;
    case 'BinaryLight': case 'Sprinkler': parts.push(p.power_status ? 'on' : 'off'); break;
    case 'ToggleSwitch': parts.push(p.current_status ? 'on' : 'off'); break;
    case 'Thermometer': parts.push(p.current_temperature === -1 ? 'no reading' : fmtC(p.current_temperature)); break;
    case 'Photometer': parts.push(p.current_illuminance === -1 ? 'no reading' : fmtLux(p.current_illuminance)); break;
    case 'PresenceSensor': parts.push(p.sensed_presence ? 'presence' : 'nobody'); break;
    case 'COGasSensor': case 'CO2GasSensor': parts.push(`${fmtNumber(num(p.current_concentration))}`); break;
    default: {
      // Any other kind, the user's own included: its first property.
      const s = kindSpecs(d.type)[0];
      if (s && own(p, s.name) !== undefined) parts.push(`${labelOf(s.name).toLowerCase()} ${formatReading(s, p[s.name])}`);
    }
  }
  return parts.join(', ');
}

// The icon's look depends only on these.
function iconSignature(d) {
  const p = d.properties || {};
  return [d.type, d.state, d.fault, p['heater.powerLevel'], p['cooler.powerLevel'], p.power_level,
    p.power_status, p.sensed_presence, p.push_and_hold, p.current_status, p['audioSource.isPlaying'],
    p['speaker.noiseLevel'] > 0, p['doorWindowSensor.opneningDetection'], p['flood.alarm'], p['siren.status'],
    p['camera.recording'], p['powerSwitch.currentStatus']].join('|');
}

// Dimmer levels, as iCasa drew them: off, > 0, ≥ .25, ≥ .5, ≥ .75.
function lightStep(level) {
  if (level <= 0) return 0;
  if (level < 0.25) return 1;
  if (level < 0.5) return 2;
  if (level < 0.75) return 3;
  return 4;
}

const BULB = '<path d="M0 -8.5a6 6 0 0 1 3.6 10.8V5h-7.2V2.3A6 6 0 0 1 0 -8.5z"/><rect x="-3" y="6" width="6" height="2.4" rx="1"/>';

// deviceIcon returns the SVG of a device's icon, centred on 0,0, about 24
// units wide. It holds numbers only, never text from the server.
function deviceIcon(d) {
  const k = kindOf(d.type);
  const p = d.properties || {};
  const active = d.state !== 'deactivated';
  let halo = '';
  let glyph = '';
  let tone = 'idle';
  switch (k) {
    case 'Heater':
    case 'Cooler': {
      const level = num(p[`${k.toLowerCase()}.powerLevel`]);
      const on = active && level > 0;
      if (on) {
        halo = `<circle class="halo" r="${(15 + 9 * level).toFixed(1)}" fill="url(#${k === 'Heater' ? 'heat' : 'cold'})"/>`;
        tone = k === 'Heater' ? 'hot' : 'cold';
      }
      glyph = k === 'Heater'
        ? '<g class="glyph"><rect x="-7.2" y="-6.5" width="3.6" height="13" rx="1.8"/><rect x="-1.8" y="-6.5" width="3.6" height="13" rx="1.8"/><rect x="3.6" y="-6.5" width="3.6" height="13" rx="1.8"/></g>'
        : '<g class="glyph stroke"><path d="M0-7.5V7.5M-6.5-3.75 6.5 3.75M-6.5 3.75 6.5-3.75"/></g>';
      break;
    }
    case 'DimmerLight':
    case 'BinaryLight': {
      const level = k === 'DimmerLight' ? num(p.power_level) : (p.power_status ? 1 : 0);
      const step = active ? lightStep(level) : 0;
      if (step > 0) {
        halo = `<circle class="halo" r="${14 + 4 * step}" fill="url(#glow)" fill-opacity="${(0.35 + 0.16 * step).toFixed(2)}"/>`;
        tone = `lit${step}`;
      }
      glyph = `<g class="glyph">${BULB}</g>`;
      break;
    }
    case 'Thermometer':
      tone = 'sensor';
      glyph = '<g class="glyph"><rect class="hollow" x="-2.2" y="-8.5" width="4.4" height="12" rx="2.2"/><circle cy="4.6" r="3.8"/><rect x="-0.9" y="-4" width="1.8" height="8"/></g>';
      break;
    case 'Photometer':
      tone = 'sensor';
      glyph = '<g class="glyph"><circle r="3.4"/><path class="stroke" d="M0-8.2v2.6M0 5.6v2.6M-8.2 0h2.6M5.6 0h2.6M-5.8-5.8l1.8 1.8M4 4l1.8 1.8M-5.8 5.8l1.8-1.8M4-4l1.8-1.8"/></g>';
      break;
    case 'PresenceSensor':
      tone = active && p.sensed_presence ? 'present' : 'sensor';
      glyph = '<g class="glyph"><path class="hollow" d="M-8.5 0c2.6-4.2 5.5-6.2 8.5-6.2s5.9 2 8.5 6.2c-2.6 4.2-5.5 6.2-8.5 6.2s-5.9-2-8.5-6.2z"/><circle r="3"/></g>';
      break;
    case 'MotionSensor':
      tone = 'sensor';
      glyph = '<g class="glyph"><circle r="2.2"/><path class="stroke" d="M-4.4-4.4a6.2 6.2 0 0 0 0 8.8M4.4-4.4a6.2 6.2 0 0 1 0 8.8M-7.2-7.2a10.2 10.2 0 0 0 0 14.4M7.2-7.2a10.2 10.2 0 0 1 0 14.4"/></g>';
      break;
    case 'PushButton':
      tone = p.push_and_hold ? 'on' : 'idle';
      glyph = '<g class="glyph"><circle class="hollow" r="7"/><circle r="4"/></g>';
      break;
    case 'ToggleSwitch':
      tone = p.current_status ? 'on' : 'idle';
      glyph = `<g class="glyph"><rect class="hollow" x="-7.5" y="-4.5" width="15" height="9" rx="4.5"/><circle cx="${p.current_status ? 3 : -3}" r="3"/></g>`;
      break;
    case 'Sprinkler':
      tone = active && p.power_status ? 'cold' : 'idle';
      glyph = '<g class="glyph"><path d="M0-8.5c3.2 4.4 5.2 6.8 5.2 9.6a5.2 5.2 0 0 1-10.4 0c0-2.8 2-5.2 5.2-9.6z"/></g>';
      break;
    case 'COGasSensor':
    case 'CO2GasSensor':
      tone = 'sensor';
      glyph = `<g class="glyph"><text class="glyph-text" y="2.8" text-anchor="middle">${k === 'COGasSensor' ? 'CO' : 'CO₂'}</text></g>`;
      break;
    case 'AudioSource':
      tone = active && p['audioSource.isPlaying'] ? 'on' : 'idle';
      glyph = '<g class="glyph"><path class="stroke" d="M-1.2 4.5V-7.5L6-9v11.5"/><ellipse cx="-3.6" cy="4.6" rx="2.8" ry="2.2"/><ellipse cx="3.6" cy="3" rx="2.8" ry="2.2"/></g>';
      break;
    case 'Speaker':
      tone = active && num(p['speaker.noiseLevel']) > 0 ? 'on' : 'idle';
      glyph = '<g class="glyph"><path d="M-7.5-3h3.6L1-7.5v15L-3.9 3h-3.6z"/><path class="stroke" d="M3.6-3.6a5 5 0 0 1 0 7.2M5.8-6.2a8.6 8.6 0 0 1 0 12.4"/></g>';
      break;
    case 'Siren':
      tone = active && p['siren.status'] ? 'hot' : 'idle';
      glyph = '<g class="glyph"><path d="M-6 4.5v-4a6 6 0 0 1 12 0v4z"/><rect x="-7.8" y="4.8" width="15.6" height="2.8" rx="1"/><path class="stroke" d="M0-8.8v-1.6M-7.6-5.6l-1.2-1.2M7.6-5.6l1.2-1.2"/></g>';
      break;
    case 'Camera':
      tone = active && p['camera.recording'] ? 'on' : 'sensor';
      glyph = '<g class="glyph"><rect x="-8" y="-5" width="11.5" height="10" rx="2"/><path d="M4.5-1.6 8.5-4.5v9l-4-2.9z"/></g>';
      break;
    case 'FloodSensor':
      tone = p['flood.alarm'] ? 'cold' : 'sensor';
      glyph = '<g class="glyph"><path d="M0-8.5c2.6 3.6 4.2 5.6 4.2 7.8a4.2 4.2 0 0 1-8.4 0c0-2.2 1.6-4.2 4.2-7.8z"/><path class="stroke" d="M-8 6.2q2-1.6 4 0t4 0 4 0 4 0"/></g>';
      break;
    case 'DoorWindowSensor': {
      const open = !!p['doorWindowSensor.opneningDetection'];
      tone = open ? 'on' : 'sensor';
      glyph = `<g class="glyph"><rect class="hollow" x="-6" y="-8" width="12" height="16" rx="1"/>${open
        ? '<path d="M-6-8 2-5.5v16L-6 8z"/>' : '<rect x="-6" y="-8" width="12" height="16" rx="1"/>'}</g>`;
      break;
    }
    case 'PowerSwitchMeter':
      tone = p['powerSwitch.currentStatus'] ? 'on' : 'idle';
      glyph = '<g class="glyph"><path d="M1.5-9-5.5 1.2h4.6L-2.5 9 5.5-1.8H.8z"/></g>';
      break;
    case 'BathroomScale':
      glyph = '<g class="glyph"><rect class="hollow" x="-8" y="-8" width="16" height="16" rx="3"/><path d="M-4-3.2a4.8 4.8 0 0 1 8 0l-2.4 1.6a2 2 0 0 0-3.2 0z"/></g>';
      break;
    case 'Sphygmometer':
      tone = 'hot';
      glyph = '<g class="glyph"><path d="M0 7.5-6.2 1.2a3.9 3.9 0 0 1 6.2-5 3.9 3.9 0 0 1 6.2 5z"/></g>';
      break;
    case 'MedicalThermometer':
      tone = 'sensor';
      glyph = '<g class="glyph"><rect class="hollow" x="-2" y="-8.5" width="4" height="11" rx="2"/><circle cy="4.8" r="3.4"/><path class="stroke" d="M5-8v5M2.5-5.5h5"/></g>';
      break;
    case 'Tablet':
      glyph = '<g class="glyph"><rect class="hollow" x="-6" y="-8.5" width="12" height="17" rx="2"/><circle cy="6" r="1.1"/></g>';
      break;
    default:
      // A kind of the user's own: a chip.
      glyph = '<g class="glyph"><rect class="hollow" x="-5.5" y="-5.5" width="11" height="11" rx="1.5"/><rect x="-2.5" y="-2.5" width="5" height="5"/><path class="stroke" d="M-2.7-8v2.5M2.7-8v2.5M-2.7 5.5V8M2.7 5.5V8M-8-2.7h2.5M-8 2.7h2.5M5.5-2.7H8M5.5 2.7H8"/></g>';
  }
  const fault = d.fault === 'yes'
    ? '<g class="fault-badge" transform="translate(9 -9)"><path d="M0-6.5 6.8 5.2H-6.8z"/><path class="mark" d="M0-2.6v3.6M0 3.2v.1"/></g>'
    : '';
  return `${halo}<circle class="ring" r="16"/><circle class="base tone-${tone}" r="12"/><g class="tone-${tone}">${glyph}</g>${fault}<circle class="flash-ring" r="12"/>`;
}

function personIcon(p) {
  const color = own(PERSON_COLORS, p.type) || '#495057';
  const small = ['Boy', 'Girl'].includes(p.type);
  const s = small ? 0.85 : 1;
  return `<circle class="ring" r="17"/><g transform="scale(${s})"><circle class="person-bg" r="13" fill="${color}"/>` +
    `<circle cy="-5" r="4.6" fill="#fff"/><path d="M-7.5 9.4v-1.6a7.5 7 0 0 1 15 0v1.6z" fill="#fff"/></g>`;
}

function isSelected(entity, id) {
  return ui.selected?.entity === entity && ui.selected?.id === id;
}

// ---------------------------------------------------------------- lists

let listSig = '';
function renderLists() {
  const zones = [...model.zones.values()];
  const persons = [...model.persons.values()];
  const unplaced = [...model.devices.values()].filter((d) => !isPlaced(d));
  // Each row as shown: the lists are redrawn when what they show changes.
  const zoneRows = zones.map((z) => [z.id, displayName(z), `${z.rightX - z.leftX} × ${z.bottomY - z.topY} at ${z.leftX},${z.topY}`]);
  const personRows = persons.map((p) => [p.id, displayName(p),
    `${p.type} · ${isPlaced(p) ? (p.location === 'unknown' ? 'outside' : p.location) : 'not placed'}`, isPlaced(p)]);
  const unplacedRows = unplaced.map((d) => [d.id, displayName(d), kindOf(d.type)]);
  const sig = JSON.stringify([zoneRows, personRows, unplacedRows]);
  if (sig === listSig) return;
  listSig = sig;
  setText($('#zone-count'), String(zones.length));
  setText($('#person-count'), String(persons.length));
  setText($('#unplaced-count'), String(unplaced.length));

  $('#zone-list').replaceChildren(...(zoneRows.length ? zoneRows.map(([id, name, where]) => el('li', {},
    el('button', { type: 'button', class: 'link', 'data-testid': `zone-item-${id}`, onclick: () => select('zone', id) }, name),
    el('span', { class: 'muted' }, where),
    el('button', { type: 'button', class: 'icon-btn danger', 'aria-label': `Delete zone ${name}`, title: 'Delete', 'data-testid': `zone-delete-${id}`, onclick: () => removeEntity('zone', id) }, '×'),
  )) : [el('li', { class: 'muted' }, 'None')]));

  $('#person-list').replaceChildren(...(personRows.length ? personRows.map(([id, name, where, placed]) => el('li', {},
    el('button', { type: 'button', class: 'link', 'data-testid': `person-item-${id}`, onclick: () => select('person', id) }, name),
    el('span', { class: 'muted' }, where),
    !placed && el('button', { type: 'button', class: 'btn small', 'data-testid': `person-place-${id}`, onclick: () => placeAtCentre('person', id) }, 'Place'),
    el('button', { type: 'button', class: 'icon-btn danger', 'aria-label': `Delete person ${name}`, title: 'Delete', 'data-testid': `person-delete-${id}`, onclick: () => removeEntity('person', id) }, '×'),
  )) : [el('li', { class: 'muted' }, 'None')]));

  $('#unplaced-list').replaceChildren(...(unplacedRows.length ? unplacedRows.map(([id, name, kind]) => el('li', { 'data-testid': `unplaced-${id}` },
    el('button', { type: 'button', class: 'link', onclick: () => select('device', id) }, name),
    el('span', { class: 'muted' }, kind),
    el('button', { type: 'button', class: 'btn small', 'data-testid': `unplaced-place-${id}`, onclick: () => placeAtCentre('device', id) }, 'Place'),
  )) : [el('li', { class: 'muted' }, 'None')]));
}

function viewCentre() {
  const [x, y, w, h] = ui.viewBox;
  return { x: Math.trunc(x + w / 2), y: Math.trunc(y + h / 2) };
}

async function placeAtCentre(entity, id) {
  const c = viewCentre();
  try {
    const out = await api('PUT', `/${entity}s/${entity}/${enc(id)}`, { positionX: c.x, positionY: c.y });
    store(entity, out);
  } catch (err) {
    toast(err.message);
  }
}

async function removeEntity(entity, id) {
  try {
    await api('DELETE', `/${entity}s/${entity}/${enc(id)}`);
    change(entity, id, undefined);
    if (isSelected(entity, id)) select(null);
  } catch (err) {
    toast(err.message);
  }
}

function collection(entity) {
  return { zone: model.zones, device: model.devices, person: model.persons }[entity];
}

function store(entity, obj) {
  if (!obj?.id) return;
  change(entity, obj.id, obj);
}

// ---------------------------------------------------------------- inspector

// The panel of the selection: its fields by key, each with how to read the
// model's value.
let panel = null;

function select(entity, id) {
  if (ui.selected) touch(ui.selected.entity, ui.selected.id);
  ui.selected = entity ? { entity, id } : null;
  if (ui.selected) touch(entity, id);
  buildInspector();
  scheduleRender();
}

function buildInspector() {
  const body = $('#inspector-body');
  panel = null;
  const sel = ui.selected;
  const obj = sel && collection(sel.entity).get(sel.id);
  if (!obj) {
    body.replaceChildren(el('p', { class: 'hint' },
      sel ? `${sel.id} no longer exists.` : 'Click a zone, a device or a person on the plan to see and edit it. Drag persons and devices to move them.'));
    return;
  }
  panel = { entity: sel.entity, id: sel.id, fields: new Map(), ids: new Set() };
  const form = el('form', { class: 'panel', 'data-testid': `${sel.entity}-panel`, novalidate: true });
  const title = el('h3', { class: 'panel-title', id: 'panel-title' });
  const sub = el('p', { class: 'muted small panel-sub' });
  const close = el('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Close', title: 'Close', 'data-testid': 'panel-close', onclick: () => select(null) }, '×');
  form.append(el('div', { class: 'panel-head' }, el('div', {}, title, sub), close));
  panel.title = title;
  panel.sub = sub;

  if (sel.entity === 'device') buildDeviceFields(form, obj);
  else if (sel.entity === 'person') buildPersonFields(form, obj);
  else buildZoneFields(form, obj);

  const error = el('p', { class: 'error', role: 'alert', 'data-testid': 'panel-error', hidden: true });
  const status = el('p', { class: 'ok small', role: 'status', 'data-testid': 'panel-status' });
  panel.error = error;
  panel.status = status;
  form.append(error, status, el('div', { class: 'row buttons' },
    el('button', { type: 'submit', class: 'btn primary', 'data-testid': `${sel.entity}-save` }, 'Save'),
    el('button', { type: 'button', class: 'btn danger', 'data-testid': `${sel.entity}-delete`, onclick: () => removeEntity(sel.entity, sel.id) }, 'Delete'),
  ));
  form.addEventListener('submit', (e) => { e.preventDefault(); savePanel(); });
  form.addEventListener('input', (e) => { if (e.target.dataset.key) e.target.dataset.dirty = '1'; });
  form.addEventListener('change', (e) => { if (e.target.dataset.key) e.target.dataset.dirty = '1'; });
  body.replaceChildren(form);
  refreshInspector();
}

// addField adds a labelled input (or a read-only output) for one value.
// f: {key, label, type: number|boolean|string|select, options, get(obj),
// readOnly, format(v), min, max, step, unit, hint}.
function addField(parent, f) {
  // Keys that differ only in the characters an id cannot hold (a.b, a_b)
  // get ids of their own, so that each label focuses its own input.
  const base = `f-${f.key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  let id = base;
  for (let n = 2; panel.ids.has(id); n++) id = `${base}-${n}`;
  panel.ids.add(id);
  let input;
  if (f.readOnly) {
    input = el('output', { id, class: 'readonly', 'data-key': f.key, 'data-testid': f.testid, 'aria-live': 'off' });
  } else if (f.type === 'boolean') {
    input = el('input', { id, type: 'checkbox', 'data-key': f.key, 'data-testid': f.testid });
  } else if (f.type === 'select') {
    input = el('select', { id, 'data-key': f.key, 'data-testid': f.testid },
      f.options.map((o) => el('option', { value: o }, o)));
  } else if (f.type === 'number') {
    input = el('input', { id, type: 'number', step: f.step ?? 'any', min: f.min, max: f.max, 'data-key': f.key, 'data-testid': f.testid, inputmode: 'decimal', required: true });
  } else {
    input = el('input', { id, type: 'text', 'data-key': f.key, 'data-testid': f.testid });
  }
  const label = el('label', { for: id, class: 'field-label', title: f.hint }, f.label,
    f.code && el('code', {}, f.code));
  const extra = f.unit && !f.readOnly ? el('span', { class: 'unit' }, f.unit) : null;
  const row = el('div', { class: `field${f.type === 'boolean' && !f.readOnly ? ' check' : ''}` }, label,
    el('div', { class: 'field-input' }, input, extra, f.remove || null));
  parent.append(row);
  panel.fields.set(f.key, { ...f, input });
  return row;
}

function buildDeviceFields(form, d) {
  const specs = kindSpecs(d.type);
  const props = el('fieldset', {}, el('legend', {}, 'Properties'));
  const known = new Set();
  for (const s of specs) {
    known.add(s.name);
    addField(props, {
      key: `prop:${s.name}`, testid: `prop-${s.name}`, label: labelOf(s.name), code: s.name, hint: s.doc,
      type: s.type, min: s.min, max: s.max, step: s.step, unit: s.unit, readOnly: s.derived,
      get: (o) => own(o.properties, s.name), format: (v) => formatReading(s, v),
    });
  }
  for (const [name, v] of Object.entries(d.properties || {})) {
    if (known.has(name) || COMMON_PROPS.has(name)) continue;
    // An object or an array has no input that could edit it: it is shown
    // as JSON, read-only.
    if (v !== null && typeof v === 'object') {
      addField(props, { key: `prop:${name}`, testid: `prop-${name}`, label: name, readOnly: true,
        get: (o) => own(o.properties, name), format: (x) => (x === undefined ? '–' : JSON.stringify(x)) });
      continue;
    }
    const type = typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'string';
    addField(props, { key: `prop:${name}`, testid: `prop-${name}`, label: name, type, get: (o) => own(o.properties, name) });
  }
  if (props.children.length === 1) props.append(el('p', { class: 'muted small' }, 'This kind has no properties of its own.'));
  form.append(props);

  const status = el('fieldset', { class: 'two' }, el('legend', {}, 'Status'));
  addField(status, { key: 'state', testid: 'device-state', label: 'State', type: 'select', options: ['activated', 'deactivated'], get: (o) => o.state });
  addField(status, { key: 'fault', testid: 'device-fault', label: 'Fault', type: 'select', options: ['no', 'yes'], get: (o) => o.fault });
  form.append(status);

  form.append(placeFieldset('device'));
}

function placeFieldset(entity) {
  const place = el('fieldset', { class: 'two' }, el('legend', {}, 'Name and place'));
  addField(place, { key: 'name', testid: `${entity}-name`, label: 'Name', type: 'string', get: (o) => o.name });
  addField(place, { key: 'location', testid: `${entity}-location`, label: 'Location', readOnly: true,
    get: (o) => o.location, format: (v) => (!v || v === 'unknown' ? 'outside every zone' : v) });
  addField(place, { key: 'positionX', testid: `${entity}-x`, label: 'X', type: 'number', step: 1, get: (o) => o.positionX });
  addField(place, { key: 'positionY', testid: `${entity}-y`, label: 'Y', type: 'number', step: 1, get: (o) => o.positionY });
  return place;
}

function formatReading(spec, v) {
  if (typeof v !== 'number') return v === true ? 'yes' : v === false ? 'no' : String(v ?? '–');
  if (spec.unit === 'K') return v === -1 ? 'no reading (outside every zone)' : `${fmtNumber(v)} K (${fmtC(v)})`;
  if (spec.name === 'current_illuminance') return v === -1 ? 'no reading (outside every zone)' : fmtLux(v);
  return `${fmtNumber(v)}${spec.unit ? ` ${spec.unit}` : ''}`;
}

function buildPersonFields(form, p) {
  const types = model.personTypes.length ? model.personTypes : [p.type];
  const f = el('fieldset', {}, el('legend', {}, 'Person'));
  addField(f, { key: 'type', testid: 'person-type', label: 'Type', type: 'select', options: types.includes(p.type) ? types : [p.type, ...types], get: (o) => o.type });
  form.append(f, placeFieldset('person'));
}

function buildZoneFields(form, z) {
  const f = el('fieldset', { class: 'two' }, el('legend', {}, 'Zone'));
  addField(f, { key: 'name', testid: 'zone-name', label: 'Name', type: 'string', get: (o) => o.name });
  addField(f, { key: 'isRoom', testid: 'zone-isroom', label: 'Room', type: 'boolean', get: (o) => o.isRoom });
  for (const k of ['leftX', 'topY', 'rightX', 'bottomY']) {
    addField(f, { key: k, testid: `zone-${k}`, label: k, type: 'number', step: 1, get: (o) => o[k] });
  }
  form.append(f);
  const vars = el('fieldset', {}, el('legend', {}, 'Variables'));
  panel.vars = vars;
  form.append(vars);
  const add = el('div', { class: 'add-var' },
    el('input', { 'aria-label': 'New variable name', placeholder: 'Variable', 'data-testid': 'var-new-name' }),
    el('input', { 'aria-label': 'New variable value', placeholder: 'Value', type: 'number', step: 'any', 'data-testid': 'var-new-value' }),
  );
  panel.addVar = add;
  form.append(add);
  syncZoneVariables(z);
}

// syncZoneVariables adds the fields of variables that appeared since the
// panel was built.
function syncZoneVariables(z) {
  for (const name of Object.keys(z.variables || {})) {
    const key = `var:${name}`;
    if (panel.fields.has(key)) continue;
    const remove = el('button', { type: 'button', class: 'icon-btn', 'aria-label': `Remove variable ${name}`, title: 'Remove', onclick: () => removeVariable(name) }, '×');
    addField(panel.vars, {
      key, testid: `var-${name}`, label: name, type: 'number', remove,
      unit: name === 'Temperature' ? 'K' : name === 'Illuminance' ? 'lx' : name === 'Volume' ? 'm³' : '',
      get: (o) => own(o.variables, name),
    });
  }
  for (const [key, f] of panel.fields) {
    if (key.startsWith('var:') && !Object.hasOwn(z.variables || {}, key.slice(4))) {
      f.input.closest('.field').remove();
      panel.fields.delete(key);
    }
  }
}

async function removeVariable(name) {
  try {
    store('zone', await api('PUT', `/zones/zone/${enc(panel.id)}`, { variables: { [name]: null } }));
  } catch (err) {
    showError(panel?.error, err);
  }
}

// refreshInspector shows the model's current values in the fields the user
// is not editing.
function refreshInspector() {
  if (!panel) return;
  const obj = collection(panel.entity).get(panel.id);
  if (!obj) {
    buildInspector();
    return;
  }
  if (panel.entity === 'device') {
    setText(panel.title, displayName(obj));
    setText(panel.sub, `${obj.type} · ${obj.id}`);
  } else if (panel.entity === 'person') {
    setText(panel.title, displayName(obj));
    setText(panel.sub, `Person · ${obj.id}`);
  } else {
    setText(panel.title, displayName(obj));
    const v = obj.variables || {};
    setText(panel.sub, `Zone · ${obj.id}${'Temperature' in v ? ` · ${fmtC(v.Temperature)}` : ''}${'Illuminance' in v ? ` · ${fmtLux(v.Illuminance)}` : ''}`);
    syncZoneVariables(obj);
  }
  for (const f of panel.fields.values()) {
    const v = f.get(obj);
    const input = f.input;
    if (f.readOnly) {
      setText(input, f.format ? f.format(v) : String(v ?? '–'));
      continue;
    }
    if (input.dataset.dirty || document.activeElement === input) continue;
    if (f.type === 'boolean') input.checked = !!v;
    else {
      const s = v == null ? '' : (typeof v === 'number' ? fmtNumber(v) : String(v));
      if (input.value !== s) input.value = s;
    }
  }
}

// readField returns the value of an edited field, or throws.
function readField(f) {
  const input = f.input;
  if (f.type === 'boolean') return input.checked;
  if (f.type === 'number') {
    const v = input.value.trim() === '' ? NaN : Number(input.value);
    if (!Number.isFinite(v)) throw new Error(`${f.code || f.label} must be a number`);
    return v;
  }
  return input.value;
}

function same(a, b) {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) < 1e-12;
  return a === b;
}

async function savePanel() {
  const p = panel;
  if (!p) return;
  const obj = collection(p.entity).get(p.id);
  if (!obj) return;
  showError(p.error, null);
  setText(p.status, '');
  const body = {};
  const sent = [];
  // The properties and variables sent, without a prototype: a name such as
  // "__proto__" set on a plain object would set its prototype and be sent
  // as nothing.
  const named = () => Object.create(null);
  try {
    for (const [key, f] of p.fields) {
      // Only what the user edited is sent: a field shows its value rounded
      // (or, for a value the input cannot hold, not at all), so sending the
      // others back would overwrite the home with what the panel shows.
      if (f.readOnly || !f.input.dataset.dirty) continue;
      const v = readField(f);
      sent.push(f);
      if (same(v, f.get(obj))) continue;
      if (key.startsWith('prop:')) (body.properties ||= named())[key.slice(5)] = v;
      else if (key.startsWith('var:')) (body.variables ||= named())[key.slice(4)] = v;
      else if (key === 'positionX' || key === 'positionY' || ['leftX', 'topY', 'rightX', 'bottomY'].includes(key)) body[key] = Math.trunc(v);
      else body[key] = v;
    }
    if (p.addVar) {
      const [n, val] = p.addVar.querySelectorAll('input');
      if (n.value.trim()) {
        const v = Number(val.value);
        if (val.value.trim() === '' || !Number.isFinite(v)) throw new Error(`variable ${n.value.trim()} needs a number`);
        (body.variables ||= named())[n.value.trim()] = v;
      }
    }
  } catch (err) {
    showError(p.error, err);
    return;
  }
  if (!Object.keys(body).length) {
    for (const f of sent) delete f.input.dataset.dirty;
    setText(p.status, 'Nothing to save.');
    return;
  }
  try {
    const out = await api('PUT', `/${p.entity}s/${p.entity}/${enc(p.id)}`, body);
    for (const f of sent) delete f.input.dataset.dirty;
    if (p.addVar) for (const i of p.addVar.querySelectorAll('input')) i.value = '';
    store(p.entity, out);
    if (panel === p) {
      setText(p.status, 'Saved.');
      refreshInspector();
    }
  } catch (err) {
    showError(p.error, err);
  }
}

// ---------------------------------------------------------------- dragging

function planPoint(evt) {
  const plan = $('#plan');
  const m = plan.getScreenCTM();
  if (!m) return { x: 0, y: 0 };
  const pt = new DOMPoint(evt.clientX, evt.clientY).matrixTransform(m.inverse());
  return { x: pt.x, y: pt.y };
}

function onPointerDown(evt) {
  if (evt.button !== 0) return;
  const g = evt.target.closest('[data-entity]');
  if (!g) return;
  const { entity, id } = g.dataset;
  if (entity === 'zone') {
    ui.drag = { entity, id, g, zoneOnly: true, startX: evt.clientX, startY: evt.clientY };
    return;
  }
  const obj = collection(entity).get(id);
  if (!obj) return;
  evt.preventDefault();
  const p = planPoint(evt);
  ui.drag = {
    entity, id, g, startX: evt.clientX, startY: evt.clientY, moved: false,
    dx: p.x - obj.positionX, dy: p.y - obj.positionY, x: obj.positionX, y: obj.positionY,
    pointerId: evt.pointerId,
  };
  try { g.setPointerCapture(evt.pointerId); } catch { /* synthetic pointer */ }
  g.focus({ preventScroll: true });
}

function onPointerMove(evt) {
  const d = ui.drag;
  if (!d || d.zoneOnly) return;
  if (!d.moved && Math.hypot(evt.clientX - d.startX, evt.clientY - d.startY) < 4) return;
  d.moved = true;
  d.g.classList.add('dragging');
  const p = planPoint(evt);
  d.x = p.x - d.dx;
  d.y = p.y - d.dy;
  placeIcon(d.g, d.x, d.y);
}

async function onPointerUp(evt) {
  const d = ui.drag;
  if (!d) return;
  ui.drag = null;
  if (d.zoneOnly) {
    if (Math.hypot(evt.clientX - d.startX, evt.clientY - d.startY) < 4) select('zone', d.id);
    return;
  }
  d.g.classList.remove('dragging');
  try { d.g.releasePointerCapture(d.pointerId); } catch { /* not captured */ }
  if (!d.moved) {
    select(d.entity, d.id);
    return;
  }
  await moveTo(d.entity, d.id, d.x, d.y);
}

function onPointerCancel() {
  const d = ui.drag;
  if (!d) return;
  ui.drag = null;
  if (d.g) d.g.classList.remove('dragging');
  touch(d.entity, d.id);
}

// moveTo puts a device or person at x, y (truncated) on the server.
async function moveTo(entity, id, x, y) {
  const obj = collection(entity).get(id);
  if (!obj) return;
  const positionX = Math.trunc(x), positionY = Math.trunc(y);
  const before = { ...obj };
  change(entity, id, { ...obj, positionX, positionY });
  try {
    store(entity, await api('PUT', `/${entity}s/${entity}/${enc(id)}`, { positionX, positionY }));
  } catch (err) {
    if (collection(entity).get(id)) change(entity, id, before);
    toast(`Cannot move ${displayName(obj)}: ${err.message}`);
  }
}

function onPlanKey(evt) {
  const g = evt.target.closest?.('[data-entity]');
  if (!g) return;
  const { entity, id } = g.dataset;
  if (evt.key === 'Enter' || evt.key === ' ') {
    evt.preventDefault();
    select(entity, id);
    return;
  }
  const step = (evt.shiftKey ? 50 : 10) * ui.unit;
  const delta = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[evt.key];
  if (!delta || entity === 'zone') return;
  evt.preventDefault();
  const obj = collection(entity).get(id);
  if (obj) moveTo(entity, id, obj.positionX + delta[0], obj.positionY + delta[1]);
}

// ---------------------------------------------------------------- clock

function setClock(c) {
  if (!c) return;
  clock.time = c.currentTime;
  clock.at = performance.now();
  clock.factor = c.factor;
  clock.pause = c.pause;
  clock.offset = offsetOf(c.currentDateStr, c.currentTime, clock.offset);
  clock.startOffset = offsetOf(c.startDateStr, c.startDate, clock.offset);
  const pause = $('#clock-pause');
  pause.textContent = c.pause ? 'Resume' : 'Pause';
  pause.setAttribute('aria-pressed', String(!!c.pause));
  pause.classList.toggle('primary', !!c.pause);
  const factor = $('#clock-factor');
  if (document.activeElement !== factor && !factor.dataset.dirty) factor.value = String(c.factor);
  const start = $('#clock-start');
  if (document.activeElement !== start && !start.dataset.dirty) start.value = toInputDate(c.startDate, clock.startOffset);
  tickClock();
}

// offsetOf returns the offset of the server's time zone at instant ms, read
// from str, ms as the server writes it (to the second), or else when str
// does not parse.
function offsetOf(str, ms, orElse) {
  const local = parseDateStr(str);
  return Number.isFinite(local) ? local - (ms - (((ms % 1000) + 1000) % 1000)) : orElse;
}

// The last millisecond of the year 9999 in UTC, 9999-12-31T23:59:59.999Z.
const END_OF_TIME = 253402300799999;

// endMillis is the last instant of simulated time, where the server's clock
// stops: the last millisecond of the year 9999 in UTC or in the server's time
// zone, whichever comes first (its offset being taken as the current one).
function endMillis() {
  return Math.max(clock.time, Math.min(END_OF_TIME, END_OF_TIME - clock.offset));
}

// nowMillis is the simulated time now, ticked locally from the last reading,
// up to the end of simulated time.
function nowMillis() {
  if (!Number.isFinite(clock.time)) return NaN;
  if (clock.pause) return clock.time;
  return Math.min(clock.time + (performance.now() - clock.at) * clock.factor, endMillis());
}

// nudgeClock moves the local clock forward to an event's time when the
// server is ahead (time advanced by other means than the wall clock).
function nudgeClock(t) {
  if (typeof t !== 'number' || !Number.isFinite(clock.time)) return;
  if (t > nowMillis() + 1000) {
    clock.time = t;
    clock.at = performance.now();
  }
}

// parseDateStr reads dd/MM/yyyy-HH:mm:ss as a UTC instant.
function parseDateStr(s) {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})-(\d{2}):(\d{2}):(\d{2})$/.exec(s || '');
  if (!m) return NaN;
  const d = new Date(0);
  d.setUTCFullYear(+m[3], +m[2] - 1, +m[1]);
  d.setUTCHours(+m[4], +m[5], +m[6], 0);
  return d.getTime();
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad2 = (n) => String(n).padStart(2, '0');

function formatSim(ms) {
  if (!Number.isFinite(ms)) return '—';
  const d = new Date(Math.floor(ms) + clock.offset);
  return `${DAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ` +
    `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
}

// toInputDate returns instant ms as a datetime-local value, in the time zone
// whose offset at ms is offset.
function toInputDate(ms, offset) {
  if (!Number.isFinite(ms)) return '';
  const d = new Date(ms + offset);
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}T` +
    `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
}

function fromInputDate(s) {
  const m = /^(\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(s);
  if (!m) return NaN;
  const d = new Date(0);
  d.setUTCFullYear(+m[1], +m[2] - 1, +m[3]);
  d.setUTCHours(+m[4], +m[5], +(m[6] || 0), 0);
  // The offset at the start date: a new one is most often near it.
  return d.getTime() - clock.startOffset;
}

function tickClock() {
  const t = $('#clock-time');
  setText(t, formatSim(nowMillis()));
  const ms = nowMillis();
  if (Number.isFinite(ms)) setAttr(t, 'datetime', new Date(Math.floor(ms)).toISOString());
  t.classList.toggle('paused', clock.pause);
}

async function updateClock(body) {
  try {
    setClock(await api('PUT', '/clocks/clock/default', body));
  } catch (err) {
    toast(`Clock: ${err.message}`);
  }
}

async function fetchClock() {
  try {
    setClock(await api('GET', '/clocks/clock/default'));
  } catch { /* the connection widget says why */ }
}

// ---------------------------------------------------------------- scripts

let scriptOptionsSig = '';
function renderScripts() {
  const sel = $('#script-select');
  const scripts = [...model.scripts.values()];
  if (!ui.script || !model.scripts.has(ui.script)) {
    const playing = scripts.find((s) => s.state !== 'stopped');
    ui.script = (playing || scripts[0])?.id || '';
  }
  const sig = JSON.stringify(scripts.map((s) => [s.id, s.name, s.state]));
  if (sig !== scriptOptionsSig) {
    scriptOptionsSig = sig;
    sel.replaceChildren(...(scripts.length
      ? scripts.map((s) => el('option', { value: s.id }, `${s.name || s.id}${s.state !== 'stopped' ? ` (${s.state})` : ''}`))
      : [el('option', { value: '' }, 'No scripts')]));
  }
  if (sel.value !== ui.script) sel.value = ui.script;
  sel.disabled = !scripts.length;
  const s = model.scripts.get(ui.script);
  const start = $('#script-start'), pause = $('#script-pause'), stop = $('#script-stop');
  start.disabled = !s || s.state === 'started';
  start.textContent = s?.state === 'paused' ? 'Resume' : 'Start';
  pause.disabled = !s || s.state !== 'started';
  stop.disabled = !s || s.state === 'stopped';
  const pct = s ? Math.round(s.completePercent || 0) : 0;
  const progress = $('#script-progress');
  progress.value = pct;
  setAttr(progress, 'aria-valuetext', `${pct}%`);
  const state = $('#script-state');
  setText(state, s ? `${s.state} · ${pct}%` : '—');
  state.dataset.state = s?.state || '';
  const details = [];
  if (s) {
    details.push(`${s.actionNumber} actions`, `factor ${s.factor}`);
    if (s.startDate) details.push(`starts ${s.startDate.replace('-', ' ')}`);
    details.push(`lasts ${duration(s.executionTime)}`);
    if (s.errors) details.push(`${s.errors} failed${s.lastError ? `: ${s.lastError}` : ''}`);
  }
  setText($('#script-details'), details.join(' · '));
}

function duration(ms) {
  if (!Number.isFinite(ms) || ms <= 0) return '0 min';
  const m = Math.round(ms / 60000);
  return m >= 60 ? `${Math.floor(m / 60)} h ${pad2(m % 60)} min` : `${m} min`;
}

async function setScriptState(state) {
  const err = $('#script-error');
  showError(err, null);
  if (!ui.script) return;
  try {
    const s = await api('PUT', `/scriptPlayer/script/${enc(ui.script)}`, { state });
    model.scripts.set(s.id, s);
    scheduleRender();
  } catch (e) {
    showError(err, e);
  }
}

// The player sends no event per action: while a script plays, read its
// progress once a second.
async function pollScript() {
  const s = model.scripts.get(ui.script);
  if (!s || s.state !== 'started') return;
  try {
    const fresh = await api('GET', `/scriptPlayer/script/${enc(s.id)}`);
    model.scripts.set(fresh.id, fresh);
    scheduleRender();
  } catch { /* gone, or offline */ }
}

// ---------------------------------------------------------------- events

function onEvent(msg) {
  let ev;
  try { ev = JSON.parse(msg.data); } catch { return; }
  if (!ev.eventType) ev.eventType = msg.type;
  if (ui.syncing) {
    ui.buffered.push(ev);
    return;
  }
  applyEvent(ev);
}

// known reports whether an event of type t may put obj, a zone, device or
// person, in the model: its "-added" event does; another, only while the
// model has it. A deleted zone's devices leave it after its zone-removed,
// each with an event of the zone's variables, which brought the zone back.
function known(entity, t, obj) {
  return !!obj && (t === `${entity}-added` || collection(entity).has(obj.id));
}

function applyEvent(ev) {
  const t = ev.eventType || '';
  if (t === 'device-event') {
    if (known('device', t, ev.device)) change('device', ev.device.id, ev.device);
    flash(ev.deviceId);
  } else if (t.startsWith('zone-')) {
    if (t === 'zone-removed') change('zone', ev.zoneId, undefined);
    else if (known('zone', t, ev.zone)) change('zone', ev.zone.id, ev.zone);
  } else if (t.startsWith('device-')) {
    if (t === 'device-removed') change('device', ev.deviceId, undefined);
    else if (known('device', t, ev.device)) change('device', ev.device.id, ev.device);
  } else if (t.startsWith('person-')) {
    if (t === 'person-removed') change('person', ev.personId, undefined);
    else if (known('person', t, ev.person)) change('person', ev.person.id, ev.person);
  } else if (t === 'clock-modified') {
    setClock(ev.clock);
  } else if (t.startsWith('script-')) {
    if (t === 'script-removed') model.scripts.delete(ev.scriptId);
    else if (ev.script) model.scripts.set(ev.script.id, ev.script);
  }
  if (t !== 'clock-modified') nudgeClock(ev.time);
  scheduleRender();
}

function flash(id) {
  const g = deviceEls.get(id);
  if (!g) return;
  g.classList.remove('flash');
  void g.getBBox(); // restart the animation
  g.classList.add('flash');
  clearTimeout(g._flash);
  g._flash = setTimeout(() => g.classList.remove('flash'), 1600);
}

function setConnection(state, text) {
  const c = $('#conn');
  c.dataset.state = state;
  setText($('#conn-text'), text);
  c.title = ui.problem;
  $('#reconnect').hidden = state !== 'closed';
}

function connect() {
  if (ui.source) ui.source.close();
  setConnection('connecting', 'Connecting…');
  const es = new EventSource(`${ROOT}/events${TOKEN ? `?access_token=${encodeURIComponent(TOKEN)}` : ''}`);
  ui.source = es;
  es.addEventListener('open', () => {
    ui.problem = '';
    setConnection('live', 'Live');
    refetchAll();
  });
  es.addEventListener('error', () => {
    if (es.readyState === EventSource.CLOSED) {
      setConnection('closed', 'Disconnected');
      explainClosed(es);
    } else {
      setConnection('connecting', 'Reconnecting…');
    }
  });
  for (const t of EVENT_TYPES) es.addEventListener(t, onEvent);
  es.addEventListener('message', onEvent);
  // Reconnected too late for the server to replay what was missed.
  es.addEventListener('reset', () => refetchAll());
}

// explainClosed asks the server why the event stream es was refused (an
// EventSource only says that it was) and, for a missing or wrong token, tells
// the user how to open the page; for a home that does not exist (a home of
// /homes deleted, or a name mistyped), says so.
async function explainClosed(es) {
  try {
    await api('GET', '/clocks/clock/default');
  } catch (err) {
    if (ui.source !== es) return;
    if (err.status === 403) {
      ui.problem = `${TOKEN ? 'The server refused this tab’s token' : 'This server needs a token'}: ` +
        'open the address it printed at start, …/simulator#token=…';
      setConnection('closed', TOKEN ? 'Token refused' : 'Needs a token');
    } else if (err.status === 404) {
      ui.problem = 'There is no home here: it does not exist, or it was deleted (GET /homes lists the homes)';
      setConnection('closed', 'No such home');
    } else {
      return;
    }
    toast(ui.problem);
    scheduleRender();
  }
}

// refetchAll reads the whole home again. Events that arrive meanwhile are
// kept and applied after it: each is the latest state of what it names.
async function refetchAll() {
  ui.syncing = true;
  ui.buffered = [];
  try {
    const [zones, devices, persons, clk, scripts] = await Promise.all([
      api('GET', '/zones/zones'),
      api('GET', '/devices/devices'),
      api('GET', '/persons/persons'),
      api('GET', '/clocks/clock/default'),
      api('GET', '/scriptPlayer/scripts'),
    ]);
    model.zones = new Map(zones.map((z) => [z.id, z]));
    model.devices = new Map(devices.map((d) => [d.id, d]));
    model.persons = new Map(persons.map((p) => [p.id, p]));
    model.scripts = new Map(scripts.map((s) => [s.id, s]));
    markAll();
    setClock(clk);
    if (!model.deviceTypes.length || !model.personTypes.length) await fetchTypes();
    ui.loaded = true;
  } catch (err) {
    toast(`Cannot read the home: ${err.message}`);
  } finally {
    ui.syncing = false;
    const pending = ui.buffered;
    ui.buffered = [];
    for (const ev of pending) applyEvent(ev);
    if (ui.selected && !panel) buildInspector();
    scheduleRender();
  }
}

async function fetchTypes() {
  const [dt, pt, kinds] = await Promise.all([api('GET', '/devices/deviceTypes'), api('GET', '/persons/personTypes'), api('GET', '/devices/kinds')]);
  model.deviceTypes = dt || [];
  model.kinds = new Map((kinds || []).map((k) => [k.id, k]));
  model.personTypes = (pt || []).map((t) => t.id);
  const dsel = $('#device-form select[name=type]');
  dsel.replaceChildren(...model.deviceTypes.map((t) => el('option', { value: t.id }, t.name)));
  const psel = $('#person-form select[name=type]');
  psel.replaceChildren(...model.personTypes.map((t) => el('option', { value: t }, t)));
  suggestId($('#device-form'), true);
  suggestId($('#person-form'), true);
}

// ---------------------------------------------------------------- forms

function randomSuffix() {
  return Math.floor(Math.random() * 0x10000).toString(16).padStart(4, '0');
}

// suggestId fills a create form's id with "<Type>-xxxx", as iCasa did,
// unless the user typed one.
function suggestId(form, force) {
  const id = form.elements.id;
  if (!force && id.dataset.typed) return;
  const type = kindOf(form.elements.type.value).replace(/\s+/g, '');
  if (type) id.value = `${type}-${randomSuffix()}`;
  delete id.dataset.typed;
}

function optionalInt(input) {
  const s = input.value.trim();
  if (s === '') return undefined;
  const v = Number(s);
  if (!Number.isFinite(v)) throw new Error(`${input.name} must be a number`);
  return Math.trunc(v);
}

function setupForms() {
  const zoneForm = $('#zone-form');
  zoneForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const f = zoneForm.elements;
    const err = zoneForm.querySelector('.error');
    showError(err, null);
    try {
      const body = { zoneId: f.id.value.trim() };
      if (f.name.value.trim()) body.name = f.name.value.trim();
      for (const k of ['leftX', 'topY', 'rightX', 'bottomY']) {
        const v = optionalInt(f[k]);
        if (v === undefined) throw new Error(`${k} is required`);
        body[k] = v;
      }
      const z = await api('POST', '/zones/zone', body);
      store('zone', z);
      f.id.value = '';
      f.name.value = '';
      select('zone', z.id);
    } catch (ex) {
      showError(err, ex);
    }
  });

  for (const [entity, form] of [['device', $('#device-form')], ['person', $('#person-form')]]) {
    form.elements.type.addEventListener('change', () => suggestId(form, false));
    form.elements.id.addEventListener('input', () => { form.elements.id.dataset.typed = '1'; });
    form.closest('details').addEventListener('toggle', (e) => {
      if (!e.target.open) return;
      const c = viewCentre();
      if (form.elements.x.value === '') form.elements.x.value = c.x;
      if (form.elements.y.value === '') form.elements.y.value = c.y;
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const f = form.elements;
      const err = form.querySelector('.error');
      showError(err, null);
      try {
        const body = { [`${entity}Id`]: f.id.value.trim(), type: f.type.value };
        if (f.name.value.trim()) body.name = f.name.value.trim();
        const x = optionalInt(f.x), y = optionalInt(f.y);
        if ((x === undefined) !== (y === undefined)) throw new Error('give both X and Y, or neither');
        if (x !== undefined) { body.positionX = x; body.positionY = y; }
        const out = await api('POST', `/${entity}s/${entity}`, body);
        store(entity, out);
        f.name.value = '';
        suggestId(form, true);
        select(entity, out.id);
      } catch (ex) {
        showError(err, ex);
      }
    });
  }

  $('#clock-pause').addEventListener('click', () => updateClock({ pause: !clock.pause }));
  const factor = $('#clock-factor');
  factor.addEventListener('input', () => { factor.dataset.dirty = '1'; });
  $('#factor-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const v = Number(factor.value);
    if (!Number.isInteger(v) || v < 1) {
      toast('The factor must be a whole number of at least 1.');
      return;
    }
    delete factor.dataset.dirty;
    await updateClock({ factor: v });
  });
  const start = $('#clock-start');
  start.addEventListener('input', () => { start.dataset.dirty = '1'; });
  $('#start-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const ms = fromInputDate(start.value);
    if (!Number.isFinite(ms)) {
      toast('Pick a start date and time.');
      return;
    }
    delete start.dataset.dirty;
    await updateClock({ startDate: ms });
  });

  $('#script-select').addEventListener('change', (e) => {
    ui.script = e.target.value;
    showError($('#script-error'), null);
    scheduleRender();
  });
  $('#script-start').addEventListener('click', () => setScriptState('started'));
  $('#script-pause').addEventListener('click', () => setScriptState('paused'));
  $('#script-stop').addEventListener('click', () => setScriptState('stopped'));
  $('#save-script-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = $('#save-script-id');
    const err = $('#script-error');
    showError(err, null);
    try {
      const s = await api('POST', '/scriptPlayer/script', { id: input.value.trim() });
      model.scripts.set(s.id, s);
      input.value = '';
      toast(`Saved the home as ${s.id}.`, 'ok');
      scheduleRender();
    } catch (ex) {
      showError(err, ex);
    }
  });
  $('#reset-sim').addEventListener('click', async () => {
    if (!window.confirm('Remove every zone, device and person? The clock and the scripts stay.')) return;
    try {
      await api('DELETE', '/simulation');
      model.zones.clear();
      model.devices.clear();
      model.persons.clear();
      markAll();
      select(null);
    } catch (ex) {
      toast(ex.message);
    }
  });
  $('#reconnect').addEventListener('click', connect);
}

// ---------------------------------------------------------------- start

function start() {
  const plan = $('#plan');
  plan.addEventListener('pointerdown', onPointerDown);
  plan.addEventListener('pointermove', onPointerMove);
  plan.addEventListener('pointerup', onPointerUp);
  plan.addEventListener('pointercancel', onPointerCancel);
  plan.addEventListener('keydown', onPlanKey);
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape') return;
    if (ui.drag && !ui.drag.zoneOnly) {
      onPointerCancel();
    } else if (ui.selected) {
      select(null);
    }
  });
  setupForms();
  setInterval(tickClock, 250);
  setInterval(fetchClock, 10000);
  setInterval(pollScript, 1000);
  connect();
  scheduleRender();
}

start();
