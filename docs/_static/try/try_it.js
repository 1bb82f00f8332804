// The "Try it" widget: the page's part of the site's translator (translator.js), run in the reader's browser by
// onnxruntime-web.
//
// Each `<div class="try-it">` of a page becomes a form. Nothing heavy loads until the reader first translates:
// then onnxruntime-web (served by the site, from _static/try/ort/), the chosen model's two ONNX graphs (with a
// progress bar), its vocabularies and its tokenizer rules, and Vega (for the attention map) if the page has not
// loaded it. The widget's data attributes give what the package decides: the languages, the beam, α and the extra
// output tokens of §6.1. The reader chooses greedy search or the beam, whose steps the widget shows; the map is the
// site's attention explorer (`visualization.attention_chart`'s spec, saved when the site was built) filled with this sentence's
// weights, and said in words below it. A widget that cannot start says so, and the page's others still work.
import { openTranslator } from "./translator.js";

const HERE = new URL(".", import.meta.url); // _static/try/
const models = new Map(); // weights' name -> the promise of a loaded model, shared by the page's widgets
const MENUS = ["kind", "layer", "head"]; // the map's menus (`visualization.attention_chart`'s params)
const LANGUAGES = new Intl.DisplayNames(["en"], { type: "language" });

function loadScript(url) {
  return new Promise((resolve, reject) => {
    const script = Object.assign(document.createElement("script"), { src: url });
    script.onload = resolve;
    script.onerror = () => reject(new Error(`could not load ${url}`));
    document.head.append(script);
  });
}

async function fetchBytes(url, progress) {
  // The file at `url`, reporting the bytes received so far to `progress`.
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const reader = response.body.getReader();
  const chunks = [];
  for (let received = 0; ; ) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    progress((received += value.length));
  }
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  chunks.reduce((offset, c) => (bytes.set(c, offset), offset + c.length), 0);
  return bytes;
}

async function fetchJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

async function loadModel(weights, maxExtra, report) {
  // The runtime, the model's files and the chart's spec. The runtime's WebAssembly (the largest file) and the graphs
  // are fetched here, so that the progress counts them.
  const base = new URL(`${weights}/`, HERE);
  const [config, rules, chart, runtime] = await Promise.all(
    ["config.json", "text.json", "../attention_chart.json", "../ort/files.json"].map((name) =>
      fetchJson(new URL(name, base)),
    ),
  );
  const needsRuntime = typeof ort === "undefined"; // loaded with the page's first model, kept for the next
  const graphs = Object.fromEntries(Object.entries(config.graphs).map(([name, graph]) => [name, graph.bytes]));
  const files = { ...(needsRuntime ? runtime : {}), ...graphs };
  const total = Object.values(files).reduce((n, bytes) => n + bytes, 0);
  const received = {};
  const fetched = await Promise.all(
    Object.keys(files).map((name) =>
      fetchBytes(new URL(name in runtime ? `../ort/${name}` : name, base), (bytes) => {
        received[name] = bytes;
        report(Object.values(received).reduce((n, b) => n + b, 0), total);
      }),
    ),
  );
  const bytes = Object.fromEntries(Object.keys(files).map((name, i) => [name, fetched[i]]));
  if (needsRuntime) {
    await loadScript(new URL("ort/ort.wasm.min.js", HERE));
    Object.assign(ort.env.wasm, {
      wasmPaths: new URL("ort/", HERE).href, // for its small JavaScript glue, which onnxruntime-web fetches itself
      wasmBinary: bytes["ort-wasm-simd-threaded.wasm"],
      numThreads: 1, // threads would need a cross-origin-isolated page
    });
  }
  const translator = await openTranslator(ort, { config, rules, graphs: bytes }, { maxExtra });
  if (typeof vegaEmbed === "undefined") await loadScript(new URL("../vega.js", HERE));
  return { translator, chart };
}

function argmax(values) {
  // The first index of the largest value, as numpy's and PyTorch's argmax.
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

function chartSpec(chart, weights, sourceTokens, targetTokens, choices) {
  // The saved spec of the site's attention explorer, with this sentence's weights and tokens, and the menus' choices
  // of the map it replaces (`choices`, undefined for the first).
  const rows = ["kind,layer,head,row,col,weight"];
  weights.forEach((tensor, kind) => {
    const [, layers, heads, queries, keys] = tensor.dims;
    const w = tensor.data;
    for (let l = 0, n = 0; l < layers; l++)
      for (let h = 0; h < heads; h++)
        for (let q = 0; q < queries; q++)
          for (let k = 0; k < keys; k++, n++) rows.push(`${kind},${l + 1},${h + 1},${q},${k},${w[n].toFixed(3)}`);
  });
  const spec = structuredClone(chart);
  spec.data = { values: rows.join("\n"), format: spec.data.format };
  delete spec.datasets;
  const axes = { queries: [sourceTokens, targetTokens, targetTokens], keys: [sourceTokens, targetTokens, sourceTokens] };
  for (const param of spec.params) {
    if (param.name in axes) param.value = axes[param.name];
    else if (choices && param.name in choices) param.value = choices[param.name];
  }
  return spec;
}

function render(widget) {
  // The form, the status line, the translation, the beam's and the map's places, from the widget's data attributes.
  const { source, target, example, beam } = widget.dataset;
  const weights = JSON.parse(widget.dataset.weights); // [{name, megabytes}], the default first
  for (const name of ["beam", "alpha", "maxExtra"]) {
    if (!(Number(widget.dataset[name]) >= 0)) throw new Error(`its data attribute ${name} is not a number`);
  }
  widget.innerHTML = `
    <form class="try-it-form">
      <label class="try-it-label">${LANGUAGES.of(source)}
        <input class="try-it-input" name="text" lang="${source}" autocomplete="off"></label>
      <div class="try-it-controls">
        <label>search <select class="try-it-search" name="search"></select></label>
        <label>weights <select class="try-it-weights" name="weights"></select></label>
        <button class="try-it-button" type="submit">Translate</button>
      </div>
    </form>
    <p class="try-it-status" role="status"></p>
    <progress class="try-it-progress" aria-label="Loading the model" hidden></progress>
    <p class="try-it-output-label">${LANGUAGES.of(target)}</p>
    <p class="try-it-output" lang="${target}" aria-live="polite"></p>
    <div class="try-it-beam"></div>
    <div class="try-it-chart"></div>
    <p class="try-it-words"></p>`;
  widget.querySelector(".try-it-input").value = example;
  const search = widget.querySelector(".try-it-search");
  search.add(new Option("greedy", "1"));
  if (Number(beam) > 1) search.add(new Option(`beam ${beam}`, beam, true, true)); // the model's own search, first
  const select = widget.querySelector(".try-it-weights");
  for (const { name, megabytes } of weights) select.add(new Option(`${name}, ${megabytes.toFixed(1)} MB`, name));
  widget.querySelector("form").addEventListener("submit", (event) => {
    event.preventDefault();
    const button = widget.querySelector(".try-it-button");
    if (button.getAttribute("aria-disabled") === "true") return; // one translation at a time
    button.setAttribute("aria-disabled", "true"); // not `disabled`, which would take the keyboard's focus away
    translate(widget)
      .catch((error) => {
        widget.querySelector(".try-it-status").textContent = `Could not translate: ${error.message}`;
        widget.dataset.state = "failed";
        console.error(error);
      })
      .finally(() => button.setAttribute("aria-disabled", "false"));
  });
}

function clear(widget) {
  // The last sentence's translation, beam and map go; the map's menus' choices stay for the next.
  if (widget.view) widget.choices = Object.fromEntries(MENUS.map((name) => [name, widget.view.signal(name)]));
  widget.view?.finalize();
  widget.view = null;
  for (const part of [".try-it-output", ".try-it-words"]) widget.querySelector(part).textContent = "";
  delete widget.dataset.milliseconds;
  for (const part of [".try-it-beam", ".try-it-chart"]) widget.querySelector(part).replaceChildren();
}

function model(widget, weights) {
  // The promise of the model with `weights`, loading it (and reporting the bytes received) on first use.
  const status = widget.querySelector(".try-it-status");
  const progress = widget.querySelector(".try-it-progress");
  if (!models.has(weights)) {
    status.textContent = `Loading the model (${weights} weights)…`;
    const report = (received, total) => {
      Object.assign(progress, { hidden: false, max: total, value: received });
      status.textContent = `Loading the model (${weights} weights): ${(received / 1e6).toFixed(1)} of ${(total / 1e6).toFixed(1)} MB`;
    };
    models.set(weights, loadModel(weights, Number(widget.dataset.maxExtra), report));
    models.get(weights).catch(() => models.delete(weights)); // a failed load is tried again on the next click
  }
  return models.get(weights).finally(() => (progress.hidden = true));
}

async function translate(widget) {
  const status = widget.querySelector(".try-it-status");
  const weights = widget.querySelector(".try-it-weights").value;
  const beam = Number(widget.querySelector(".try-it-search").value);
  const text = widget.querySelector(".try-it-input").value;
  clear(widget);
  widget.dataset.state = "loading";
  const { translator, chart } = text.trim() ? await model(widget, weights) : {};
  const { tokens, ids } = translator ? translator.encode(text) : { tokens: [] };
  if (tokens.length === 0) {
    status.textContent = "Type a sentence to translate.";
  } else if (tokens.length > translator.most) {
    status.textContent = `That is ${tokens.length} tokens; this model takes at most ${translator.most}: split it into shorter sentences.`;
  } else {
    widget.dataset.state = "translating";
    status.textContent = "Translating…";
    const start = performance.now();
    const allowUnk = widget.dataset.allowUnk !== "false"; // the model's own rule
    const found = await translator.search(ids, { beam, alpha: Number(widget.dataset.alpha), allowUnk });
    const milliseconds = performance.now() - start;
    widget.querySelector(".try-it-output").textContent = translator.decode(found.best.tokens);
    const how = beam === 1 ? "Greedy search" : `Beam search (k = ${beam}, α = ${widget.dataset.alpha})`;
    status.textContent = `${how}, ${weights} weights: ${Math.round(milliseconds)} ms in your browser.`;
    widget.dataset.milliseconds = milliseconds;
    if (beam > 1) showBeam(widget, translator, found);
    const itos = translator.config.vocabs;
    const read = found.best.tokens.slice(0, -1).map((id) => itos.tgt[id]); // what the decoder read for its last token
    const maps = await translator.attention(ids, found.best.tokens);
    await draw(widget, chart, maps, ids.map((id) => itos.src[id]), read);
  }
  widget.dataset.state = "done";
}

function showBeam(widget, translator, found) {
  // The beam at each step, chosen with a slider: the k prefixes kept, with log P, and the hypotheses that ended at
  // that step with log P, the length penalty lp and s = log P / lp; the one chosen (the best s) is marked.
  const place = widget.querySelector(".try-it-beam");
  const words = (ids) => ids.map((id) => translator.config.vocabs.tgt[id]).join(" ");
  const last = found.steps.length;
  const chosenAt = found.steps.findIndex((step) => step.ended.includes(found.best)) + 1; // shown first
  place.innerHTML = `
    <label class="try-it-step"><span>Beam at step <output aria-hidden="true"></output> of ${last}</span>
      <input type="range" min="1" max="${last}" value="${chosenAt}"></label>
    <div class="try-it-table" tabindex="0" role="region" aria-label="The beam at this step"><table>
      <thead><tr><th scope="col">hypothesis</th><th scope="col">log P</th><th scope="col">lp</th>
        <th scope="col">s = log P / lp</th></tr></thead><tbody></tbody></table></div>`;
  const slider = place.querySelector("input");
  const show = () => {
    const step = found.steps[slider.value - 1];
    place.querySelector("output").textContent = slider.value;
    slider.setAttribute("aria-valuetext", `step ${slider.value} of ${last}`);
    const row = (h, ended) => {
      const tr = document.createElement("tr");
      const chosen = h === found.best;
      if (chosen) tr.className = "try-it-chosen";
      const cells = ended
        ? [`${words(h.tokens)}${chosen ? " (chosen)" : " (ended)"}`, h.logP.toFixed(3), h.lp.toFixed(3), h.score.toFixed(3)]
        : [words(h.tokens), h.logP.toFixed(3), "", ""];
      tr.append(...cells.map((text) => Object.assign(document.createElement("td"), { textContent: text })));
      return tr;
    };
    place.querySelector("tbody").replaceChildren(...step.ended.map((h) => row(h, true)), ...step.beam.map((h) => row(h)));
  };
  slider.addEventListener("input", show);
  show();
}

async function draw(widget, chart, weights, sourceTokens, targetTokens) {
  const spec = chartSpec(chart, weights, sourceTokens, targetTokens, widget.choices);
  const place = widget.querySelector(".try-it-chart");
  widget.view = (await vegaEmbed(place, spec, { renderer: "svg", actions: false })).view;
  widget.querySelector(".try-it-words").textContent = inWords(weights[2], sourceTokens, targetTokens);
}

function inWords(sourceAttention, sourceTokens, targetTokens) {
  // The map's gist for a reader who cannot see it: for each token the decoder read, the source token its last
  // layer's heads attend to most, on average (the decoder-source map, `decoder_source_attention`).
  const [, layers, heads, queries, keys] = sourceAttention.dims;
  const w = sourceAttention.data;
  const pairs = [];
  for (let q = 0; q < queries; q++) {
    const mean = Array.from({ length: keys }, (_, k) => {
      let sum = 0;
      for (let h = 0; h < heads; h++) sum += w[(((layers - 1) * heads + h) * queries + q) * keys + k];
      return sum / heads;
    });
    pairs.push(`${targetTokens[q]} → ${sourceTokens[argmax(mean)]}`);
  }
  return `In words, the last layer's attention to the source: each word the decoder read, and the source word it looked at most: ${pairs.join(", ")}.`;
}

for (const widget of document.querySelectorAll("div.try-it")) {
  try {
    render(widget);
  } catch (error) {
    // a widget whose attributes are wrong says so, and the page's other widgets still work
    widget.textContent = `This translator could not start: ${error.message}`;
    console.error(error);
  }
}
