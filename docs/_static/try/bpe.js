// Subword pieces in the browser, as the package's `annotated_transformer.tokenization.BPETokenizer` finds them: sentencepiece's
// byte-pair encoding (its normalisation, then the merges by score), and its way back to text. The rules come from
// Python (`onnx_format.bpe_rules`): the pieces and their scores, the control pieces, the unknown piece's text, whether
// a character no piece holds falls back to its bytes, and where sentencepiece's normalisation differs from Unicode's
// NFKC, character by character.
import { normalized } from "./text.js";

const SPACE = "\u2581"; // ▁, sentencepiece's mark of a space
const BYTE = /^<0x([0-9A-F]{2})>$/; // a byte piece: <0xE6>
const strictUtf8 = new TextDecoder("utf-8", { fatal: true }); // throws on bytes that are no character

export class BPE {
  constructor(rules) {
    this.lang = rules.lang;
    this.scores = new Map(Object.entries(rules.pieces)); // the pieces merges may make, with their scores
    this.control = new Set(rules.control); // <s>, </s>, <blank>: no text
    this.unknown = rules.unknown;
    this.unknownText = rules.unknown_text; // what <unk> reads as
    this.byteFallback = rules.byte_fallback; // a character no piece holds: its UTF-8 bytes, <0xE6> <0x88> …
    this.mapped = new Map(Object.entries(rules.normalization)); // a character: sentencepiece's text for it
  }

  /** The text as sentencepiece's nmt_nfkc normalises it (NFKC, but a character of the rules as they map it), with
   * its whitespace made single, trimmed and marked ▁. */
  #normalize(text) {
    let done = "";
    let run = ""; // characters NFKC normalises, since the last one the rules map
    for (const char of normalized(text)) {
      const mapped = this.mapped.get(char);
      if (mapped === undefined) run += char;
      else [done, run] = [done + run.normalize("NFKC") + mapped, ""];
    }
    const words = (done + run.normalize("NFKC")).split(" ").filter(Boolean);
    return words.length ? SPACE + words.join(SPACE) : "";
  }

  /** The pieces of `text`: its characters merged, the pair whose merge scores highest first (the leftmost of
   * equals), until no neighbours make a piece; a character no piece holds is its bytes' pieces, or (with no byte
   * pieces) one <unk> for each run of such characters. */
  tokenize(text) {
    const symbols = Array.from(this.#normalize(text));
    for (;;) {
      let best = -1;
      let bestScore = -Infinity;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const score = this.scores.get(symbols[i] + symbols[i + 1]);
        if (score !== undefined && score > bestScore) [best, bestScore] = [i, score];
      }
      if (best < 0) break;
      symbols.splice(best, 2, symbols[best] + symbols[best + 1]);
    }
    const pieces = [];
    for (const symbol of symbols) {
      const unknown = !this.scores.has(symbol);
      if (unknown && this.byteFallback) pieces.push(...utf8Pieces(symbol));
      else if (unknown && pieces.length && !this.scores.has(pieces.at(-1))) pieces[pieces.length - 1] += symbol;
      else pieces.push(symbol);
    }
    return pieces;
  }

  /** The text of pieces: control pieces read as nothing, <unk> as its text, a run of byte pieces as the UTF-8 it
   * spells, ▁ as a space; the spaces that open the text, before its first piece that reads as something, go. */
  detokenize(pieces) {
    let text = "";
    let bytes = []; // the byte pieces' values since the last other piece
    const add = (surface, unknown = false) => {
      text += text || unknown ? surface : surface.replace(/^ /, ""); // the text's opening space goes, not <unk>'s
    };
    for (const piece of pieces) {
      if (this.control.has(piece)) continue;
      const byte = BYTE.exec(piece);
      if (byte) {
        bytes.push(parseInt(byte[1], 16));
        continue;
      }
      if (bytes.length) [bytes, text] = [[], text + utf8Text(bytes)];
      const unknown = piece === this.unknown;
      add(unknown ? this.unknownText : piece.replaceAll(SPACE, " "), unknown);
    }
    return bytes.length ? text + utf8Text(bytes) : text;
  }
}

/** The text of bytes as sentencepiece reads them: UTF-8, each byte that starts no whole character read as U+FFFD. */
function utf8Text(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i];
    const n = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    let char = null; // the character the bytes from i spell, if they spell one
    if (n && i + n <= bytes.length) {
      try {
        char = strictUtf8.decode(new Uint8Array(bytes.slice(i, i + n)));
      } catch {
        char = null;
      }
    }
    text += char ?? "\uFFFD";
    i += char === null ? 1 : n;
  }
  return text;
}

/** The byte pieces of a character's UTF-8: "我" is <0xE6> <0x88> <0x91>. */
function utf8Pieces(char) {
  return Array.from(new TextEncoder().encode(char), (b) => `<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
}
