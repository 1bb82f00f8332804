// The "Try it" widget: the site's trained translator, run in the reader's browser by onnxruntime-web.
//
// Each `<div class="try-it">` of a page becomes a form. Nothing heavy loads until the reader first translates:
// then onnxruntime-web (served by the site, from _static/try/ort/), the chosen model's two ONNX graphs (with a
// progress bar), its vocabularies and its tokenizer rules, and Vega (for the attention map) if the page has not
// loaded it. The graphs are checked against the checksums in the model's config.json, from which the special tokens'
// ids come too. The search is greedy, as `onnx_format.OnnxTranslator` with a beam of one in Python; the map is the
// site's attention explorer (`viz.attention_chart`'s spec, saved when the site was built) filled with this sentence's
// weights, and said in words below it. A widget that cannot start says so, and the page's others still work.
import { Detokenizer, Tokenizer } from "./text.js";

const HERE = new URL(".", import.meta.url); // _static/try/
const models = new Map(); // weights' name -> the promise of a loaded model, shared by the page's widgets
const MENUS = ["kind", "layer", "head"]; // the map's menus (`viz.attention_chart`'s params)

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

async function checked(name, bytes, expected) {
  // `bytes` if their SHA-256 is the one the model's config.json gives for `name`; else an error that says so.
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  if (hex !== expected) throw new Error(`${name} is not the file this model was exported with (its checksum differs)`);
  return bytes;
}

async function fetchJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

async function loadModel(weights, report) {
  // Everything a translation needs: the runtime, the graphs, the vocabularies, the tokenizers, the chart's spec.
  // The runtime's WebAssembly (the largest file) and the graphs are fetched here, so that the progress counts them.
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
  const graph = (name) => checked(name, bytes[name], config.graphs[name].sha256);
  const encoder = await ort.InferenceSession.create(await graph("encoder.onnx"));
  const decoder = await ort.InferenceSession.create(await graph("decoder.onnx"));
  const special = (token) => config.vocabs.tgt.indexOf(token); // training.SPECIALS, first in both vocabularies
  if (typeof vegaEmbed === "undefined") await loadScript(new URL("../vega.js", HERE));
  return {
    config,
    chart,
    encoder,
    decoder,
    tokenizer: new Tokenizer(rules.source),
    detokenizer: new Detokenizer(rules.target),
    source: new Map(config.vocabs.src.map((token, id) => [token, id])),
    BOS: special("<s>"),
    EOS: special("</s>"),
    PAD: special("<blank>"),
  };
}

function ids(tokens) {
  return new ort.Tensor("int64", BigInt64Array.from(tokens, BigInt), [1, tokens.length]);
}

function argmax(values) {
  // The first index of the largest value, as numpy's and PyTorch's argmax.
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

async function greedy(model, sourceIds) {
  // The most probable token at each step, up to the input's length + 50 tokens (`greedy_search`); the attention
  // weights of the encoder and of the decoder's last step, and what that step read: <s> and the output before it.
  const src = ids(sourceIds);
  const { memory, encoder_self_attention } = await model.encoder.run({ src });
  const ys = [model.BOS];
  let step, read;
  for (let i = 0; i < sourceIds.length + 49; i++) {
    read = [...ys];
    step = await model.decoder.run({ memory, src, ys: ids(read) });
    const next = argmax(step.log_probs.data);
    if (next === model.EOS) break;
    ys.push(next);
  }
  const weights = [encoder_self_attention, step.decoder_self_attention, step.decoder_source_attention];
  return { ys, read, weights }; // the weights in viz.KINDS' order
}

function chartSpec(model, weights, sourceTokens, targetTokens, choices) {
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
  const spec = structuredClone(model.chart);
  spec.data = { values: rows.join("\n"), format: spec.data.format };
  delete spec.datasets;
  const axes = { queries: [sourceTokens, targetTokens, targetTokens], keys: [sourceTokens, targetTokens, sourceTokens] };
  for (const param of spec.params) {
    if (param.name in axes) param.value = axes[param.name];
    else if (choices && param.name in choices) param.value = choices[param.name];
  }
  return spec;
}

const LANGUAGES = new Intl.DisplayNames(["en"], { type: "language" });

function render(widget) {
  // The form, the status line, the translation and the map's place, from the widget's data attributes.
  const { source, target, example } = widget.dataset;
  const weights = JSON.parse(widget.dataset.weights); // [{name, megabytes}], the default first
  widget.innerHTML = `
    <form class="try-it-form">
      <label class="try-it-label">${LANGUAGES.of(source)}
        <input class="try-it-input" name="text" lang="${source}" autocomplete="off"></label>
      <div class="try-it-controls">
        <label>weights <select class="try-it-weights" name="weights"></select></label>
        <button class="try-it-button" type="submit">Translate</button>
      </div>
    </form>
    <p class="try-it-status" role="status"></p>
    <progress class="try-it-progress" aria-label="Loading the model" hidden></progress>
    <p class="try-it-output-label">${LANGUAGES.of(target)}</p>
    <p class="try-it-output" lang="${target}" aria-live="polite"></p>
    <div class="try-it-chart"></div>
    <p class="try-it-words"></p>`;
  widget.querySelector(".try-it-input").value = example;
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

async function translate(widget) {
  const status = widget.querySelector(".try-it-status");
  const output = widget.querySelector(".try-it-output");
  const progress = widget.querySelector(".try-it-progress");
  const weights = widget.querySelector(".try-it-weights").value;
  const text = widget.querySelector(".try-it-input").value;
  if (widget.view) widget.choices = Object.fromEntries(MENUS.map((name) => [name, widget.view.signal(name)]));
  widget.view?.finalize(); // the last sentence's map goes, its menus' choices stay for the next
  widget.view = null;
  widget.querySelector(".try-it-chart").replaceChildren();
  widget.querySelector(".try-it-words").textContent = "";
  output.textContent = "";
  if (!text.trim()) {
    status.textContent = "Type a sentence to translate.";
    widget.dataset.state = "done";
    return;
  }
  widget.dataset.state = "loading";
  if (!models.has(weights)) {
    status.textContent = `Loading the model (${weights} weights)…`;
    const report = (received, total) => {
      Object.assign(progress, { hidden: false, max: total, value: received });
      status.textContent = `Loading the model (${weights} weights): ${(received / 1e6).toFixed(1)} of ${(total / 1e6).toFixed(1)} MB`;
    };
    models.set(weights, loadModel(weights, report));
    models.get(weights).catch(() => models.delete(weights)); // a failed load is tried again on the next click
  }
  const model = await models.get(weights).finally(() => (progress.hidden = true));
  widget.dataset.state = "translating";
  status.textContent = "Translating…";
  const tokens = model.tokenizer.tokenize(text);
  const sourceIds = [...tokens.map((t) => model.source.get(t) ?? model.source.get("<unk>")), model.EOS];
  const most = model.config.positions - 51; // as `Translator.too_long`: 50 positions kept for the output to grow
  if (tokens.length === 0) {
    status.textContent = "Type a sentence to translate.";
  } else if (tokens.length > most) {
    status.textContent = `That is ${tokens.length} tokens; this model takes at most ${most}: split it into shorter sentences.`;
  } else {
    const start = performance.now();
    const { ys, read, weights: maps } = await greedy(model, sourceIds);
    const milliseconds = performance.now() - start;
    const itos = model.config.vocabs.tgt;
    const outputIds = ys.filter((id) => id !== model.BOS && id !== model.PAD); // as `Vocab.decode`
    output.textContent = model.detokenizer.detokenize(outputIds.map((id) => itos[id]));
    status.textContent = `Greedy search, ${weights} weights: ${Math.round(milliseconds)} ms in your browser.`;
    widget.dataset.milliseconds = milliseconds;
    await draw(widget, model, maps, sourceIds.map((id) => model.config.vocabs.src[id]), read.map((id) => itos[id]));
  }
  widget.dataset.state = "done";
}

async function draw(widget, model, weights, sourceTokens, targetTokens) {
  const spec = chartSpec(model, weights, sourceTokens, targetTokens, widget.choices);
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
