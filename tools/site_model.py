"""The translator of the website's "Try it" widget, for `tools/build_docs.py`.

The model is a model directory given to `make docs MODEL=DIR` (`annotated-transformer export` writes one), or else a
small model trained on Multi30k in a few minutes and cached, so that the widget always works and is always tested. It is exported as
ONNX twice, with 8-bit and with float32 weights, beside onnxruntime-web's files (npm installs the version that
`tools/web/package-lock.json` pins) and the attention explorer's chart, which the widget fills with each sentence's
weights. Nothing of it loads until a reader uses the widget."""

import contextlib
import hashlib
import html
import json
import shutil
import subprocess
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

import torch

from annotated_transformer import __version__
from annotated_transformer.fast_decoding import BeamSearch
from annotated_transformer.files import cache_dir
from annotated_transformer.formats import model_search, provenance
from annotated_transformer.model_directory import read_description
from annotated_transformer.multi30k import MULTI30K, train_multi30k
from annotated_transformer.onnx_format import ONNX_FORMAT, export_onnx
from annotated_transformer.recipe import Recipe
from annotated_transformer.translation import Translator
from annotated_transformer.visualization import KINDS, attention_chart

WEB = Path(__file__).resolve().parent / "web"  # package.json and its lock
# what the page loads
RUNTIME = ("ort.wasm.min.js", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
# the largest: the widget fetches it itself, to count it in its progress bar
WASM = "ort-wasm-simd-threaded.wasm"
WEIGHTS = ("int8", "float32")  # the widget's choices, its default first
# The site's model when `make docs` is given none, with the recipe's vocabulary: a few minutes on 2 cores, 25 BLEU on
# Multi30k's validation (beam 4, 2026-12-06).
FALLBACK = replace(
    Recipe(),
    vocabulary=MULTI30K.vocabulary,
    bpe_size=MULTI30K.bpe_size,
    N=2,
    d_model=128,
    d_ff=512,
    h=4,
    epochs=0,
    steps=800,
    max_tokens=3000,
    warmup=300,
    factor=0.5,  # 1.0, a peak rate of 5e-3, left one shared matrix at 9.6 BLEU
    cooldown=2,
)
EXAMPLES = {
    "de": "Zwei Hunde spielen im Schnee.",
    "en": "Two dogs are playing in the snow.",
}  # the text box's first text


def fallback_model() -> Path:
    """The model directory of `FALLBACK`, trained on Multi30k on first use and kept in the package's cache
    (`files.cache_dir()`), under a name that changes with the recipe, the package's version and PyTorch's."""
    key = json.dumps([asdict(FALLBACK), __version__, torch.__version__]).encode()
    home = cache_dir() / "site-model" / hashlib.sha256(key).hexdigest()[:16]
    if (home / "config.json").is_file():
        return home
    print(
        f"Training the site's model ({FALLBACK.steps} updates, a few minutes; kept in {home.parent})",
        flush=True,
    )
    home.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="training-", dir=home.parent) as scratch:
        run = Path(scratch) / "run"
        train_multi30k(run, FALLBACK, progress=False)
        model = Translator.from_checkpoint(run / "last.pt", device="cpu").save_pretrained(
            Path(scratch) / "model", about=provenance(run / "last.pt")
        )
        with contextlib.suppress(OSError):  # another build cached it meanwhile: that one serves
            model.rename(home)
        if not (home / "config.json").is_file():
            raise OSError(f"Could not keep the site's model in {home}: is {home.parent} writable?")
    return home


def npm_ci():
    "Install the npm packages `tools/web/package-lock.json` pins into `tools/web/node_modules/`."
    npm = shutil.which("npm")
    if not npm:
        raise SystemExit(
            "The website needs npm (Node.js 20 or later) to fetch onnxruntime-web: install Node.js."
        )
    try:
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=WEB, check=True)
    except subprocess.CalledProcessError:
        raise SystemExit(
            "npm could not install onnxruntime-web (above): the npm registry must be reachable."
        ) from None


def onnxruntime_web(into: Path):
    "onnxruntime-web's script and WebAssembly, from the pinned npm package, with its package.json (version, MIT licence)."
    package = WEB / "node_modules" / "onnxruntime-web"
    pinned = json.loads((WEB / "package-lock.json").read_text())["packages"]["node_modules/onnxruntime-web"][
        "version"
    ]
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


# and the megabytes of each download
def widget(into: Path, translator: Translator, about: dict) -> tuple[str, dict]:
    "Write the widget's models, runtime and chart under `into` (the site's `_static/try/`); return its HTML."
    sizes = {}
    for weights in WEIGHTS:
        out = export_onnx(translator, into / weights, None if weights == "float32" else weights, about)
        sizes[weights] = (
            sum(g["bytes"] for g in read_description(out, format=ONNX_FORMAT)["graphs"].values()) / 1e6
        )
    onnxruntime_web(into / "ort")
    sizes["runtime"] = (into / "ort" / WASM).stat().st_size / 1e6
    (into / "attention_chart.json").write_text(json.dumps(chart_template(translator)))
    src, tgt = translator.src_tok.lang, translator.tgt_tok.lang
    options = json.dumps([dict(name=w, megabytes=round(sizes[w], 1)) for w in WEIGHTS])
    stored = model_search(into / WEIGHTS[0])  # the page searches as the model's directory stores
    search = f'data-beam="{stored.beam}" data-alpha="{stored.alpha}" data-max-extra="{stored.max_extra}"'
    search += f' data-allow-unk="{str(stored.allow_unk).lower()}"'
    html_ = (
        f'<div class="try-it" data-source="{src}" data-target="{tgt}" data-example="{html.escape(EXAMPLES.get(src, ""))}"'
        f" data-weights='{options}' {search}>"
        "<noscript>The translator runs in your browser: it needs JavaScript.</noscript></div>"
        '\n<script type="module" src="_static/try/try_it.js"></script>'
    )
    return html_, sizes


def site_translator(model: Path | None) -> tuple[Translator, dict]:
    "The translator of `model` (a model directory; None: the fallback model) and what its directory says about it."
    model = model or fallback_model()
    return Translator.from_pretrained(model, device="cpu"), read_description(model).get("about", {})


def search_text(search: BeamSearch) -> str:
    "What the page's search does, told for the model's stored `search` (greedy when its beam is 1)."
    k, alpha, extra = search.beam, search.alpha, search.max_extra
    if k == 1:
        return (
            "It takes the most probable token each time (greedy, the model's own search), until `</s>` or the "
            f"input's length + {extra} tokens."
        )
    return (
        f"With *greedy*, it takes the most probable token each time. With *beam {k}*, the model's own search, it keeps "
        f"the {k} most probable prefixes (log P, the sum of their tokens' log-probabilities); a prefix that the model "
        "ends with `</s>` is set aside with its score s = log P / lp, where the length penalty lp = ((5 + |Y|) / 6)^α, "
        f"with the model's α = {alpha}, grows with the output's length |Y|, so that a longer output, whose log P sums "
        f"more negative terms, can still win. Once {k} have ended, or the output has reached the input's length + "
        f"{extra} tokens, the best s wins. The slider steps through the beam."
    )


def page(widget_html: str, sizes: dict, translator: Translator, about: dict, fallback: bool) -> str:
    'The "Try it" page: the widget, what it does, and which model it runs.'
    scores = about.get("scores")
    if fallback:
        model = (
            f"This build of the site carries a small model ({FALLBACK.N} layers of width {FALLBACK.d_model}, trained for "
            f"{FALLBACK.steps} updates, a few minutes on a laptop), so expect rough translations of anything unlike "
            "Multi30k's captions: `make docs MODEL=DIR` builds the site with a trained model directory "
            "(`annotated-transformer export` writes one)."
        )
    elif scores:
        model = f"The model scored {scores['sacrebleu']:.1f} sacreBLEU on {scores['split']} with {scores['search']}."
    else:
        model = "The model is the one this site was built with (`make docs MODEL=DIR`)."
    src, tgt = (lang.upper() for lang in (translator.src_tok.lang, translator.tgt_tok.lang))
    return f"""# Try it

{{.lead}}
The book's translator ({src}→{tgt}), running in your browser: type a sentence, and see its translation, the beam
search that found it, and where the model looked.

{widget_html}

When you first press *Translate*, the page loads onnxruntime-web ({sizes["runtime"]:.1f} MB) and the model's weights
({sizes["int8"]:.1f} MB in 8 bits, the default, or {sizes["float32"]:.1f} MB in float32), once for each choice of
weights. It then splits the sentence into tokens as the Python package does, runs the encoder once and the decoder
once per output token, and searches as [§6.1](decoding.ipynb) does. {search_text(translator.search)} Below, the attention
of every layer and head while the model chose the output's last token: choose the kind of attention, the layer and the head in
the menus under the map.
Nothing you type leaves your browser.

{model} The [ONNX notebook](onnx_format.ipynb) exports the model and checks it against PyTorch; the map is the
[attention explorer](visualization.ipynb)'s.
"""
