// The "Try it" translator with no page in it: a model directory written by `onnx_format.export_onnx`, opened in
// onnxruntime-web (in a browser, or in Node for the tests), which tokenizes as the package does and searches as
// `fast_decoding.search_steps` does: a beam of k hypotheses with the length penalty of §6.1 (k = 1 is greedy
// search), keeping each step of the beam for the page to show. Every number it needs comes from the model
// directory (config.json: the vocabularies, whose first tokens are the special ones, and the positions) or from
// its caller (the beam, α and the extra output tokens, which the site reads from the package).
import { BPE } from "./bpe.js";
import { Detokenizer, Tokenizer } from "./text.js";

/** `bytes` if their SHA-256 is `expected`; else an error naming the file. */
export async function checked(name, bytes, expected) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  if (hex !== expected) throw new Error(`${name} is not the file this model was exported with (its checksum differs)`);
  return bytes;
}

/** The translator of a model directory's files: `config` and `rules` (config.json and text.json, parsed) and
 * `graphs` (each graph file's bytes by name), checked against the checksums in config.json first. */
export async function openTranslator(ort, { config, rules, graphs }, { maxExtra }) {
  const session = async (name) =>
    ort.InferenceSession.create(await checked(name, graphs[name], config.graphs[name].sha256));
  return new WebTranslator(ort, config, rules, await session("encoder.onnx"), await session("decoder.onnx"), maxExtra);
}

/** The length penalty lp(Y) = ((5 + |Y|) / 6)^α of §6.1, as `decoding.length_penalty`. */
export function lengthPenalty(length, alpha) {
  return ((5 + length) / 6) ** alpha;
}

export class WebTranslator {
  constructor(ort, config, rules, encoder, decoder, maxExtra) {
    Object.assign(this, { ort, config, encoder, decoder, maxExtra });
    const bpe = rules.bpe && new BPE(rules.bpe); // one BPE for both languages, or words by spaCy's and Moses' rules
    this.tokenizer = bpe || new Tokenizer(rules.source);
    this.detokenizer = bpe || new Detokenizer(rules.target);
    this.source = new Map(config.vocabs.src.map((token, id) => [token, id]));
    const special = (token) => config.vocabs.tgt.indexOf(token); // training.SPECIALS, first in both vocabularies
    [this.BOS, this.EOS, this.PAD, this.UNK] = ["<s>", "</s>", "<blank>", "<unk>"].map(special);
    this.most = config.positions - maxExtra - 1; // source tokens at most, </s> aside, as `Translator.too_long`
  }

  /** The source's tokens and their ids, </s> last (`Translator.encode`). */
  encode(text) {
    const tokens = this.tokenizer.tokenize(text);
    const unk = this.source.get("<unk>");
    return { tokens, ids: [...tokens.map((t) => this.source.get(t) ?? unk), this.EOS] };
  }

  /** The text of output ids up to the first </s>, leaving out <s> and padding (`Vocab.decode`, then the detokenizer). */
  decode(ids) {
    const end = ids.indexOf(this.EOS);
    const tokens = (end < 0 ? ids : ids.slice(0, end)).filter((id) => id !== this.BOS && id !== this.PAD);
    return this.detokenizer.detokenize(tokens.map((id) => this.config.vocabs.tgt[id]));
  }

  #ids(rows) {
    return new this.ort.Tensor("int64", BigInt64Array.from(rows.flat(), BigInt), [rows.length, rows[0].length]);
  }

  /** The same tensor `rows` times over, along a new first axis of that size (its own is 1). */
  #repeat(tensor, rows) {
    const data = new tensor.data.constructor(tensor.data.length * rows);
    for (let r = 0; r < rows; r++) data.set(tensor.data, r * tensor.data.length);
    return new this.ort.Tensor(tensor.type, data, [rows, ...tensor.dims.slice(1)]);
  }

  /** Beam search for the source `ids` (`encode(text).ids`), as `fast_decoding.search_steps` for one sentence: k
   * rows decoded at each step, each hypothesis extended by its 2k best tokens, the k best that end set aside with
   * s(Y, X) = log P / lp until k have ended or the output reaches the input's length + `maxExtra` tokens. Returns the
   * best output (from <s> to </s>), its score, and the beam's steps: at each, the k prefixes kept, with their log P,
   * and the hypotheses that ended there, with log P, lp and s. */
  async search(ids, { beam = 1, alpha, allowUnk = true }) {
    const src = this.#ids([ids]);
    const { memory } = await this.encoder.run({ src });
    const feed = { memory: this.#repeat(memory, beam), src: this.#repeat(src, beam) };
    const limit = ids.length + this.maxExtra;
    let ys = Array.from({ length: beam }, () => [this.BOS]);
    let scores = Float32Array.from({ length: beam }, (_, r) => (r === 0 ? 0 : -Infinity)); // one live hypothesis first
    const finished = [];
    const steps = [];
    for (let t = 1; t <= limit; t++) {
      const { log_probs } = await this.decoder.run({ ...feed, ys: this.#ids(ys) }, ["log_probs"]);
      const best = this.#extensions(scores, log_probs.data, t === limit, allowUnk);
      const ended = [];
      for (const { score, parent, token } of best.slice(0, beam)) {
        if (token === this.EOS && finished.length < beam && score > -Infinity) {
          const lp = lengthPenalty(t, alpha);
          const hypothesis = { tokens: [...ys[parent], this.EOS], logP: score, lp, score: score / lp };
          finished.push(hypothesis);
          ended.push(hypothesis);
        }
      }
      if (finished.length >= beam || t === limit) {
        steps.push({ beam: [], ended });
        break;
      }
      const kept = best.filter((e) => e.token !== this.EOS).slice(0, beam); // the k best that go on
      ys = kept.map((e) => [...ys[e.parent], e.token]);
      scores = Float32Array.from(kept, (e) => e.score);
      steps.push({ beam: ys.map((tokens, r) => ({ tokens, logP: scores[r] })), ended });
    }
    if (!finished.length) throw new Error(`no hypothesis ended within ${limit} tokens (beam ${beam})`);
    const chosen = finished.reduce((a, b) => (b.score > a.score ? b : a)); // the first of the best, as Python's max
    return { best: chosen, steps };
  }

  /** The 2k best one-token extensions of the beam, best first: log P in float32, as PyTorch adds them. At the limit
   * only </s> is left; with `allowUnk` false, <unk> never is (Python's log P of -∞). Exact ties, rare in float32, go
   * to the lower row, then the lower token; `topk` leaves their order undefined, so there (only) Python may choose
   * another. */
  #extensions(scores, logProbs, atLimit, allowUnk) {
    const rows = scores.length;
    const vocab = logProbs.length / rows;
    const best = []; // at most 2k, sorted by score, descending
    for (let row = 0; row < rows; row++) {
      for (let token = 0; token < vocab; token++) {
        if ((atLimit && token !== this.EOS) || (!allowUnk && token === this.UNK)) continue;
        const score = Math.fround(scores[row] + logProbs[row * vocab + token]);
        if (best.length === 2 * rows && !(score > best.at(-1).score)) continue;
        let at = best.length;
        while (at > 0 && score > best[at - 1].score) at--;
        best.splice(at, 0, { score, parent: row, token });
        if (best.length > 2 * rows) best.pop();
      }
    }
    return best;
  }

  /** The attention weights of reading `source` ids and writing `output` (from <s>, ending with </s>): the
   * encoder's, and the decoder's when it chose the last token, in `visualization.KINDS`' order. */
  async attention(source, output) {
    const src = this.#ids([source]);
    const { memory, encoder_self_attention } = await this.encoder.run({ src });
    const step = await this.decoder.run({ memory, src, ys: this.#ids([output.slice(0, -1)]) });
    return [encoder_self_attention, step.decoder_self_attention, step.decoder_source_attention];
  }
}
