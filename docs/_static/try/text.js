// Words and punctuation in the browser, as the package's `annotated_transformer.tokenization.Tokenizer` finds them: spaCy's
// rule-based tokenizer to split text into tokens, Moses' detokenizer (then two rejoining rules) to join them back.
// Both are driven by rules written in Python (`tokenizer_rules(lang)`, `detokenizer_rules(lang)`), whose regexes
// arrive as JS regex sources, already converted from Python's syntax and meaning to JS's under the `u` flag
// (\w, \d, \s and \b made Unicode-wide as in Python, \UXXXXXXXX written \u{...}, needless escapes dropped).

// Python's str.isspace(), which spaCy and Moses split on (JS's \s adds U+FEFF and lacks U+001C-U+001F and U+0085).
const SPACE = "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const RUNS = new RegExp(`[${SPACE}]+|[^${SPACE}]+`, "gu");
const IS_SPACE = new RegExp(`^[${SPACE}]+$`, "u");

/** The text composed (NFC) and without byte-order marks, as the vocabularies were built from it. */
export function normalized(text) {
  return text.normalize("NFC").replaceAll("\ufeff", "");
}

/** A regex from a rules source; null stays null. */
function compile(source, flags = "u") {
  return source == null ? null : new RegExp(source, flags);
}

/** A regex that must match at the start of the text, as Python's `re.match` does (the end is free). */
function compileMatch(source) {
  return compile(source == null ? null : `^(?:${source})`);
}

/** spaCy's tokenizer (spacy/tokenizer.pyx): whitespace, special cases, prefixes and suffixes, URLs, infixes. */
export class Tokenizer {
  constructor(rules) {
    this.lang = rules.lang;
    this.prefix = compile(rules.prefix); // anchored at the start by its own "^"
    this.suffix = compile(rules.suffix); // anchored at the end by its own "$"
    this.infix = compile(rules.infix, "gu");
    this.tokenMatch = compileMatch(rules.token_match);
    this.urlMatch = compileMatch(rules.url_match);
    this.specials = new Map(Object.entries(rules.special_cases));
    this.phrases = this.#phrases();
  }

  /** The tokens of `text`, without whitespace tokens. */
  tokenize(text) {
    const tokens = this.#applyPhrases(this.#tokenizeAffixes(normalized(text), true));
    return tokens.map((token) => token.text).filter((text) => !IS_SPACE.test(text));
  }

  /** Tokens as {text, space}: `space` is the one plain space that followed the token, which spaCy keeps with it.
   * The text splits at whitespace; a run of whitespace other than that one space is a token of its own. */
  #tokenizeAffixes(text, withSpecials) {
    const tokens = [];
    for (let [run] of text.matchAll(RUNS)) {
      if (IS_SPACE.test(run)) {
        if (tokens.length && run.startsWith(" ")) {
          tokens.at(-1).space = true;
          run = run.slice(1);
        }
        if (run) tokens.push({ text: run, space: false });
      } else {
        tokens.push(...this.#tokenizeWord(run, withSpecials).map((text) => ({ text, space: false })));
      }
    }
    return tokens;
  }

  /** The tokens of a text without whitespace: a special case as a whole, else prefixes, the core, suffixes. */
  #tokenizeWord(word, withSpecials) {
    const special = withSpecials && this.specials.get(word);
    if (special) return special;
    const { core, prefixes, suffixes } = this.#splitAffixes(word, withSpecials);
    return [...prefixes, ...this.#splitCore(core, withSpecials), ...suffixes.reverse()];
  }

  /** Strip prefixes and suffixes (both at once when both match) until none is left, or until what is left
   * matches token_match or is a special case; a special case left by stripping one side stops it at once. */
  #splitAffixes(word, withSpecials) {
    const prefixes = [];
    const suffixes = [];
    const isSpecial = (text) => withSpecials && this.specials.has(text);
    let lastLength = 0;
    while (word && word.length !== lastLength) {
      if (matches(this.tokenMatch, word) || isSpecial(word)) break;
      lastLength = word.length;
      const pre = matchLength(this.prefix, word);
      if (pre && isSpecial(word.slice(pre))) {
        prefixes.push(word.slice(0, pre));
        word = word.slice(pre);
        break;
      }
      const suf = matchLength(this.suffix, word.slice(pre));
      if (suf && isSpecial(word.slice(0, -suf))) {
        suffixes.push(word.slice(-suf));
        word = word.slice(0, -suf);
        break;
      }
      if (pre) prefixes.push(word.slice(0, pre));
      if (suf) suffixes.push(word.slice(word.length - suf));
      word = word.slice(pre, word.length - suf);
    }
    return { core: word, prefixes, suffixes };
  }

  /** What is left after the affixes: a special case, one token if token_match or url_match matches it, else
   * split around its infixes (an infix at its very start is not split off). */
  #splitCore(core, withSpecials) {
    if (!core) return [];
    const special = withSpecials && this.specials.get(core);
    if (special) return special;
    if (matches(this.tokenMatch, core) || matches(this.urlMatch, core)) return [core];
    const pieces = [];
    let start = 0;
    for (const infix of this.infix ? core.matchAll(this.infix) : []) {
      if (infix.index === 0) continue;
      if (infix.index !== start) pieces.push(core.slice(start, infix.index));
      if (infix[0]) pieces.push(infix[0]);
      start = infix.index + infix[0].length;
    }
    if (start < core.length) pieces.push(core.slice(start));
    return pieces;
  }

  /** The special cases that plain tokenization would split (an affix or infix matches, or a space is in them),
   * as token sequences to look for after tokenizing: {first token: [[token texts], ...]}. */
  #phrases() {
    const phrases = new Map();
    for (const text of this.specials.keys()) {
      const splits = matchLength(this.prefix, text) || matchLength(this.suffix, text) || text.includes(" ");
      if (!splits && !(this.infix && text.match(this.infix))) continue;
      const words = this.#tokenizeAffixes(text, false).map((token) => token.text);
      phrases.set(words[0], [...(phrases.get(words[0]) ?? []), words]);
    }
    return phrases;
  }

  /** spaCy's last pass: where tokens spell a special case that tokenizing split, the special case's tokens
   * replace them. Longest matches first, then leftmost; a match whose first or last token is taken is dropped. */
  #applyPhrases(tokens) {
    const found = [];
    tokens.forEach((token, start) => {
      for (const words of this.phrases.get(token.text) ?? []) {
        if (words.every((word, k) => tokens[start + k]?.text === word)) found.push([start, start + words.length]);
      }
    });
    if (!found.length) return tokens;
    found.sort(([s1, e1], [s2, e2]) => e2 - s2 - (e1 - s1) || s1 - s2);
    const taken = new Set();
    const kept = new Map();
    for (const [start, end] of found) {
      if (!taken.has(start) && !taken.has(end - 1)) kept.set(start, end);
      for (let i = start; i < end; i++) taken.add(i);
    }
    const out = [];
    for (let i = 0; i < tokens.length; i++) {
      const end = kept.get(i);
      if (end === undefined) {
        out.push(tokens[i]);
        continue;
      }
      const span = tokens.slice(i, end);
      const text = span.map((t, k) => t.text + (t.space && k < span.length - 1 ? " " : "")).join("");
      const special = this.specials.get(text); // the text as written, spaces included, must be a special case
      const space = span.at(-1).space;
      out.push(...(special ? special.map((t, k) => ({ text: t, space: k === special.length - 1 && space })) : span));
      i = end - 1;
    }
    return out;
  }
}

/** Whether the regex (if any) matches the text. */
function matches(regex, text) {
  return regex !== null && regex.test(text);
}

/** The length of the regex's first match in the text, 0 if none (or no regex). */
function matchLength(regex, text) {
  const match = regex && regex.exec(text);
  return match ? match[0].length : 0;
}

/** Moses' detokenizer (sacremoses' MosesDetokenizer), then the package's two rejoining rules. */
export class Detokenizer {
  constructor(rules) {
    if (["cs", "fi", "fr", "ga", "it"].includes(rules.lang)) {
      throw new Error(`Moses' own detokenizing rules for "${rules.lang}" are not ported to JS.`);
    }
    this.lang = rules.lang;
    this.replace = rules.replace.map(([source, to]) => [compile(source, "gu"), to]);
    this.currency = compile(rules.currency);
    this.punct = compile(rules.punct);
    this.openQuote = compile(rules.open_quote);
    this.englishContraction = compile(rules.english_contraction);
    this.cjk = rules.cjk;
    this.rejoin = rules.rejoin.map(([source, to]) => [compile(source, "gu"), to]);
  }

  /** Text from tokens. */
  detokenize(tokens) {
    let text = ` ${tokens.join(" ")} `;
    // Rejoin aggressive hyphen splits (" @-@ " to "-") and unescape XML (&amp; to &, ...), in Moses' order.
    for (const [regex, to] of this.replace) text = text.replace(regex, to);
    const words = text.match(RUNS).filter((run) => !IS_SPACE.test(run)); // Python's str.split()
    const state = { text: "", prepend: " ", quotes: new Map() };
    words.forEach((word, i) => this.#attach(state, word, i, words));
    text = state.text.replace(/ {2,}/g, " ").replace(/^ +| +$/g, ""); // merge spaces, strip the ends
    for (const [regex, to] of this.rejoin) text = text.replace(regex, to);
    return text;
  }

  /** Add a word to the text, with or without a space before it, and say whether the next word gets one. */
  #attach(state, word, i, words) {
    const glue = (before, after) => {
      state.text += (before ? state.prepend : "") + word;
      state.prepend = after ? " " : "";
    };
    if (this.#isCjk(firstChar(word)) && this.lang !== "ko") {
      // CJK: no space between two CJK words.
      glue(!(i > 0 && this.#isCjk(lastChar(words[i - 1]))), true);
    } else if (this.currency.test(word)) {
      // Currency symbols and opening brackets: attach the next word ("$5", "(a").
      glue(true, false);
    } else if (this.punct.test(word)) {
      // Closing punctuation: attach to the word before ("a,", "b)").
      glue(false, true);
    } else if (this.lang === "en" && i > 0 && this.englishContraction.test(word)) {
      // English contractions ('s, 're): attach to the word before.
      glue(false, true);
    } else if (this.openQuote.test(word)) {
      this.#attachQuote(state, word, i, words, glue);
    } else {
      glue(true, true);
    }
  }

  /** Quotes alternate: an even count so far opens (attach the next word), an odd one closes (attach to the
   * word before). „ and “ count as ". In English a ' after a word ending in s is a possessive ("Jones' house"). */
  #attachQuote(state, word, i, words, glue) {
    const kind = /^[„“”]+$/u.test(word) ? '"' : word;
    const count = state.quotes.get(kind) ?? 0;
    if (count % 2 === 0 && this.lang === "en" && word === "'" && i > 0 && /s$/u.test(words[i - 1])) {
      glue(false, true);
      return;
    }
    glue(count % 2 === 0, count % 2 === 1);
    state.quotes.set(kind, count + 1);
  }

  /** Whether a code point is in Moses' CJK ranges. */
  #isCjk(code) {
    return this.cjk.some(([first, last]) => first <= code && code <= last);
  }
}

/** The first code point of a text. */
function firstChar(text) {
  return text.codePointAt(0);
}

/** The last code point of a text. */
function lastChar(text) {
  return [...text].at(-1).codePointAt(0);
}
