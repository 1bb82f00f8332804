"""The browser's text handling agrees with the package's: docs/_static/try/text.js with `Tokenizer`, and
docs/_static/try/bpe.js with `BPETokenizer`. Node runs each JS tokenizer, built from the rules Python writes
(`tokenizer_rules(lang)`; `bpe_rules` of a BPE learned from Multi30k's training sentences), over Multi30k's validation
and test2016 sentences in German and English, and each JS detokenizer (`detokenizer_rules(lang)`; the same BPE's rules)
over the same sentences as Python tokenizes them (for the BPE, every seventh piece made <unk> and <s> first, as a
model's output may hold them); and the BPE's tokenizer over every character of Unicode, between two letters, and its
detokenizer over Python's pieces of every sixteenth of them (most characters are not in Multi30k: their UTF-8 bytes' pieces). Each
check compares with Python's tokens or text, sentence by sentence, reports `identical / total` and needs at least 99.5%
identical."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from annotated_transformer.data import load_multi30k
from annotated_transformer.onnx_format import bpe_rules, detokenizer_rules, tokenizer_rules
from annotated_transformer.tokenization import BPETokenizer, Tokenizer, train_bpe

# its module-scoped fixture runs Node once, on one worker
pytestmark = pytest.mark.xdist_group("test_browser_text")

ROOT = Path(__file__).resolve().parent.parent
TEXT_JS, BPE_JS = (ROOT / "docs" / "_static" / "try" / name for name in ("text.js", "bpe.js"))
LANGS, SPLITS = ("de", "en"), ("val", "test_2016_flickr")
KINDS = ("tokenize", "detokenize", "bpe tokenize", "bpe detokenize")
CHECKS = [(kind, lang, split) for kind in KINDS for lang in LANGS for split in SPLITS]
# each of Unicode's
CHECKS += [("bpe tokenize", "every", "character"), ("bpe detokenize", "every", "character")]
# but surrogates
EVERY_CHARACTER = [f"a{chr(c)}b" for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000]
MIN_IDENTICAL = 0.995

# Node's side: text.js's classes over each check's inputs, all read from and written to JSON files.
DRIVER = """
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [textJs, bpeJs, jobPath, outPath] = process.argv.slice(2);
const { Tokenizer, Detokenizer } = await import(pathToFileURL(textJs));
const { BPE } = await import(pathToFileURL(bpeJs));
const { rules, checks } = JSON.parse(readFileSync(jobPath, "utf8"));
const bpe = new BPE(rules.bpe);
const made = {
  tokenize: (lang) => new Tokenizer(rules[lang].tokenizer),
  detokenize: (lang) => new Detokenizer(rules[lang].detokenizer),
  "bpe tokenize": () => bpe,
  "bpe detokenize": () => bpe,
};
const results = checks.map(({ kind, lang, inputs }) => {
  const tool = made[kind](lang);
  return inputs.map((input) => (kind.endsWith("detokenize") ? tool.detokenize(input) : tool.tokenize(input)));
});
writeFileSync(outPath, JSON.stringify(results));
"""


@pytest.fixture(scope="module")
def outputs(multi30k, tmp_path_factory) -> dict:
    "For each check, (JS's outputs, Python's), from one Node run over all the checks."
    node = shutil.which("node") or pytest.fail(
        "No Node found: install Node.js 20 or newer (https://nodejs.org)."
    )
    sentences = {split: dict(zip(("de", "en"), zip(*load_multi30k(split, multi30k)))) for split in SPLITS}
    bpe = train_bpe([text for pair in load_multi30k("train", multi30k) for text in pair])  # as the recipe's
    rules, inputs, expected = {"bpe": bpe_rules(BPETokenizer(bpe, "de"))}, {}, {}
    for lang in LANGS:
        rules[lang] = {"tokenizer": tokenizer_rules(lang), "detokenizer": detokenizer_rules(lang)}
        for kind, tokenizer in (("", Tokenizer(lang)), ("bpe ", BPETokenizer(bpe, lang))):
            for split in SPLITS:
                texts = list(sentences[split][lang])
                tokens = tokenizer.tokenize_all(texts)
                inputs[f"{kind}tokenize", lang, split], expected[f"{kind}tokenize", lang, split] = (
                    texts,
                    tokens,
                )
                if kind:  # a model's output: <s> first, and <unk> where the vocabulary lacked the word
                    tokens = [
                        ["<s>", *("<unk>" if i % 7 == 3 else t for i, t in enumerate(ts))] for ts in tokens
                    ]
                inputs[f"{kind}detokenize", lang, split] = tokens
                expected[f"{kind}detokenize", lang, split] = [tokenizer.detokenize(t) for t in tokens]
    bpe_de = BPETokenizer(bpe, "de")
    every_piece = bpe_de.tokenize_all(EVERY_CHARACTER)  # between two letters: the normalisation
    inputs["bpe tokenize", "every", "character"] = EVERY_CHARACTER
    expected["bpe tokenize", "every", "character"] = every_piece
    # a sixteenth of them: mostly bytes' pieces
    inputs["bpe detokenize", "every", "character"] = every_piece[::16]
    expected["bpe detokenize", "every", "character"] = [bpe_de.detokenize(p) for p in every_piece[::16]]
    tmp = tmp_path_factory.mktemp("browser-text")
    checks = [
        {"kind": kind, "lang": lang, "inputs": inputs[kind, lang, split]} for kind, lang, split in CHECKS
    ]
    (tmp / "job.json").write_text(
        json.dumps({"rules": rules, "checks": checks}, ensure_ascii=False), encoding="utf-8"
    )
    (tmp / "driver.mjs").write_text(DRIVER, encoding="utf-8")
    run = subprocess.run(
        [node, tmp / "driver.mjs", TEXT_JS, BPE_JS, tmp / "job.json", tmp / "out.json"],
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
    assert identical >= MIN_IDENTICAL * len(expected), (
        f"{report}; the first that differ (Python, JS): {differ[:3]}"
    )
