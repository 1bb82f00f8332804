"""The browser's text handling, docs/_static/try/text.js, agrees with the package's `Tokenizer`: Node runs the JS
tokenizer, built from `tokenizer_rules(lang)`, over Multi30k's validation and test2016 sentences in German and English,
and the JS detokenizer, built from `detokenizer_rules(lang)`, over the same sentences as `Tokenizer(lang)` tokenizes
them. Each check compares with `Tokenizer(lang).tokenize_all` or `.detokenize`, sentence by sentence, reports
`identical / total` and needs at least 99.5% identical."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from annotated_transformer.data import Tokenizer, load_multi30k
from annotated_transformer.onnx_format import detokenizer_rules, tokenizer_rules

pytestmark = pytest.mark.xdist_group("test_browser_text")  # its module-scoped fixture runs Node once, on one worker

ROOT = Path(__file__).resolve().parent.parent
TEXT_JS = ROOT / "docs" / "_static" / "try" / "text.js"
LANGS, SPLITS = ("de", "en"), ("val", "test_2016_flickr")
CHECKS = [(kind, lang, split) for kind in ("tokenize", "detokenize") for lang in LANGS for split in SPLITS]
MIN_IDENTICAL = 0.995

# Node's side: text.js's classes over each check's inputs, all read from and written to JSON files.
DRIVER = """
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [textJs, jobPath, outPath] = process.argv.slice(2);
const { Tokenizer, Detokenizer } = await import(pathToFileURL(textJs));
const { rules, checks } = JSON.parse(readFileSync(jobPath, "utf8"));
const results = checks.map(({ kind, lang, inputs }) => {
  if (kind === "tokenize") {
    const tokenizer = new Tokenizer(rules[lang].tokenizer);
    return inputs.map((text) => tokenizer.tokenize(text));
  }
  const detokenizer = new Detokenizer(rules[lang].detokenizer);
  return inputs.map((tokens) => detokenizer.detokenize(tokens));
});
writeFileSync(outPath, JSON.stringify(results));
"""


@pytest.fixture(scope="module")
def outputs(multi30k, tmp_path_factory) -> dict:
    "For each check, (JS's outputs, Python's), from one Node run over all the checks."
    node = shutil.which("node") or pytest.fail("No Node found: install Node.js 20 or newer (https://nodejs.org).")
    sentences = {split: dict(zip(("de", "en"), zip(*load_multi30k(split, multi30k)))) for split in SPLITS}
    rules, inputs, expected = {}, {}, {}
    for lang in LANGS:
        tokenizer = Tokenizer(lang)
        rules[lang] = {"tokenizer": tokenizer_rules(lang), "detokenizer": detokenizer_rules(lang)}
        for split in SPLITS:
            texts = list(sentences[split][lang])
            tokens = tokenizer.tokenize_all(texts)
            inputs["tokenize", lang, split], expected["tokenize", lang, split] = texts, tokens
            inputs["detokenize", lang, split] = tokens
            expected["detokenize", lang, split] = [tokenizer.detokenize(t) for t in tokens]
    tmp = tmp_path_factory.mktemp("browser-text")
    checks = [{"kind": kind, "lang": lang, "inputs": inputs[kind, lang, split]} for kind, lang, split in CHECKS]
    (tmp / "job.json").write_text(json.dumps({"rules": rules, "checks": checks}, ensure_ascii=False), encoding="utf-8")
    (tmp / "driver.mjs").write_text(DRIVER, encoding="utf-8")
    run = subprocess.run(
        [node, tmp / "driver.mjs", TEXT_JS, tmp / "job.json", tmp / "out.json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, f"Node failed:\n{run.stderr[-4000:]}"
    results = json.loads((tmp / "out.json").read_text(encoding="utf-8"))
    return {check: (got, expected[check]) for check, got in zip(CHECKS, results)}


@pytest.mark.parametrize("check", CHECKS, ids=" ".join)
def test_js_agrees_with_python(outputs, check):
    "JS tokenizes (or detokenizes) at least 99.5% of the sentences exactly as Python does."
    got, expected = outputs[check]
    differ = [(want, have) for have, want in zip(got, expected) if have != want]
    identical = len(expected) - len(differ)
    report = f"{' '.join(check)}: {identical} / {len(expected)} identical"
    print(report)
    assert len(got) == len(expected), f"{report}, but JS gave {len(got)} outputs"
    assert identical >= MIN_IDENTICAL * len(expected), f"{report}; the first that differ (Python, JS): {differ[:3]}"
