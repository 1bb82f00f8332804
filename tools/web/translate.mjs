// The site's translator (docs/_static/try/translator.js) in Node, with the WebAssembly of onnxruntime-web that the
// page runs: it translates sentences with an ONNX model directory, for the tests to compare with Python.
//
//   node tools/web/translate.mjs JOB.json OUT.json
//
// JOB.json: {"model": DIR, "sentences": [...], "searches": [{"beam": 1, "alpha": 0.6}, ...], "maxExtra": 50}.
// OUT.json: for each search, each sentence's {text, tokens, score, ms}.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-web";
import { openTranslator } from "../../docs/_static/try/translator.js";

const [jobPath, outPath] = process.argv.slice(2);
const { model, sentences, searches, maxExtra } = JSON.parse(readFileSync(jobPath, "utf8"));
const json = (name) => JSON.parse(readFileSync(join(model, name), "utf8"));
const config = json("config.json");
const graphs = Object.fromEntries(Object.keys(config.graphs).map((name) => [name, readFileSync(join(model, name))]));
ort.env.wasm.numThreads = 1; // as in the page
const translator = await openTranslator(ort, { config, rules: json("text.json"), graphs }, { maxExtra });

const results = [];
for (const search of searches) {
  const outputs = [];
  for (const sentence of sentences) {
    const start = performance.now();
    const { best } = await translator.search(translator.encode(sentence).ids, search);
    const ms = performance.now() - start;
    outputs.push({ text: translator.decode(best.tokens), tokens: best.tokens, score: best.score, ms });
  }
  results.push(outputs);
}
writeFileSync(outPath, JSON.stringify(results));
