"""The translator of the website's "Try it" widget, for `tools/build_docs.py`.

The model is a model directory given to `make docs MODEL=DIR` (`annotated-transformer export` writes one), or else a
tiny model trained on Multi30k in about a minute, so that the widget is always built and tested. It is exported as
ONNX twice, with 8-bit and with float32 weights, beside onnxruntime-web's files (npm installs the version that
`tools/web/package-lock.json` pins) and the attention explorer's chart, which the widget fills with each sentence's
weights. Nothing of it loads until a reader uses the widget."""

import html
import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import torch

from annotated_transformer.data import load_multi30k
from annotated_transformer.formats import provenance
from annotated_transformer.native_format import read_description
from annotated_transformer.onnx_format import ONNX_FORMAT, export_onnx
from annotated_transformer.recipe import Recipe
from annotated_transformer.runs import train_translator
from annotated_transformer.translation import Translator
from annotated_transformer.viz import KINDS, attention_chart

WEB = Path(__file__).resolve().parent / "web"  # package.json and its lock
RUNTIME = ("ort.wasm.min.js", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")  # what the page loads
WASM = "ort-wasm-simd-threaded.wasm"  # the largest: the widget fetches it itself, to count it in its progress bar
WEIGHTS = ("int8", "float32")  # the widget's choices, its default first
TINY = replace(Recipe(), N=2, d_model=64, d_ff=128, h=4, epochs=0, steps=300, max_tokens=2000, warmup=60, factor=1.0)
EXAMPLES = {
    "de": "Zwei Hunde spielen im Schnee.",
    "en": "Two dogs are playing in the snow.",
}  # the text box's first text


def tiny_translator(run: Path) -> tuple[Translator, dict]:  # and its provenance
    "A model trained for `TINY.steps` updates on Multi30k: poor translations, but a real model, in a minute or two."
    pairs = lambda split, src, tgt: load_multi30k(split, src_lang=src, tgt_lang=tgt)
    train_translator(run, pairs, TINY, progress=False)
    return Translator.from_checkpoint(run / "last.pt", device="cpu"), provenance(run / "last.pt")


def npm_ci():
    "Install the npm packages `tools/web/package-lock.json` pins into `tools/web/node_modules/`."
    npm = shutil.which("npm")
    if not npm:
        raise SystemExit("The website needs npm (Node.js 20 or later) to fetch onnxruntime-web: install Node.js.")
    try:
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=WEB, check=True)
    except subprocess.CalledProcessError:
        raise SystemExit("npm could not install onnxruntime-web (above): the npm registry must be reachable.") from None


def onnxruntime_web(into: Path):
    "onnxruntime-web's script and WebAssembly, from the pinned npm package, with its package.json (version, MIT licence)."
    package = WEB / "node_modules" / "onnxruntime-web"
    pinned = json.loads((WEB / "package-lock.json").read_text())["packages"]["node_modules/onnxruntime-web"]["version"]
    installed = package / "package.json"
    if not installed.is_file() or json.loads(installed.read_text())["version"] != pinned:
        npm_ci()
    into.mkdir(parents=True, exist_ok=True)
    for name in RUNTIME:
        shutil.copy(package / "dist" / name, into / name)
    shutil.copy(installed, into / "package.json")
    (into / "files.json").write_text(json.dumps({WASM: (into / WASM).stat().st_size}))


def chart_template(translator: Translator) -> dict:
    "The attention explorer's spec for this model's layers and heads; the widget puts each sentence's weights in it."
    c = translator.model.config
    weights = {kind: torch.zeros(c.N, c.h, 1, 1) for kind in KINDS}
    return attention_chart(weights, ["·"], ["·"]).to_dict()


def widget(into: Path, translator: Translator, about: dict) -> tuple[str, dict]:  # and the megabytes of each download
    "Write the widget's models, runtime and chart under `into` (the site's `_static/try/`); return its HTML."
    sizes = {}
    for weights in WEIGHTS:
        out = export_onnx(translator, into / weights, None if weights == "float32" else weights, about)
        sizes[weights] = sum(g["bytes"] for g in read_description(out, format=ONNX_FORMAT)["graphs"].values()) / 1e6
    onnxruntime_web(into / "ort")
    sizes["runtime"] = (into / "ort" / WASM).stat().st_size / 1e6
    (into / "attention_chart.json").write_text(json.dumps(chart_template(translator)))
    src, tgt = translator.src_tok.lang, translator.tgt_tok.lang
    options = json.dumps([dict(name=w, megabytes=round(sizes[w], 1)) for w in WEIGHTS])
    html_ = (
        f'<div class="try-it" data-source="{src}" data-target="{tgt}" data-example="{html.escape(EXAMPLES.get(src, ""))}"'
        f" data-weights='{options}'><noscript>The translator runs in your browser: it needs JavaScript.</noscript></div>"
        '\n<script type="module" src="_static/try/try_it.js"></script>'
    )
    return html_, sizes


def site_translator(model: Path | None, scratch: Path) -> tuple[Translator, dict]:
    "The translator of `model` (a model directory) and its provenance, or a tiny one trained in `scratch`."
    if model is None:
        return tiny_translator(scratch / "tiny")
    return Translator.from_pretrained(model, device="cpu"), read_description(model).get("about", {})


def page(widget_html: str, sizes: dict, translator: Translator, about: dict, tiny: bool) -> str:
    'The "Try it" page: the widget, what it does, and which model it runs.'
    scores = about.get("scores")
    if tiny:
        model = (
            f"This build of the site carries a tiny model, trained for {TINY.steps} updates, so its translations are poor: "
            "`make docs MODEL=DIR` builds the site with a trained model directory (`annotated-transformer export` writes one)."
        )
    elif scores:
        model = (
            f"The model scored {scores['sacrebleu']:.1f} sacreBLEU on {scores['split']} with {scores['search']}; here it "
            "searches greedily, which the [Multi30k notebook](multi30k.ipynb) finds worth about 0.6 BLEU less."
        )
    else:
        model = "The model is the one this site was built with (`make docs MODEL=DIR`)."
    src, tgt = (lang.upper() for lang in (translator.src_tok.lang, translator.tgt_tok.lang))
    return f"""# Try it

{{.lead}}
The book's translator ({src}→{tgt}), running in your browser: type a sentence, and see its translation and where the model looked.

{widget_html}

When you first press *Translate*, the page loads onnxruntime-web ({sizes["runtime"]:.1f} MB) and the model's weights
({sizes["int8"]:.1f} MB in 8 bits, the default, or {sizes["float32"]:.1f} MB in float32), once for each choice of
weights. It then splits the sentence into tokens as the Python package does, runs the encoder once and the decoder
once per output token, choosing the most probable one each time (greedy search), and draws the attention of every
layer and head: choose the kind of attention, the layer and the head in the menus under the map. Nothing you type
leaves your browser.

{model} The [browser notebook](browser.ipynb) exports the model and checks it against PyTorch; the map is the
[attention explorer](visualization.ipynb)'s.
"""
