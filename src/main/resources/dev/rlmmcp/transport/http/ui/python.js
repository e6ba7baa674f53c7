// A small Python tokenizer for highlighting: every token becomes a text node or a <span> whose
// text is set with textContent, so code from the agent can never become markup.
'use strict';
(function () {
  const KEYWORDS = new Set(('False None True and as assert async await break class continue def del elif else except '
    + 'finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case').split(' '));
  const BUILTINS = new Set(('abs all any bool bytes callable chr dict dir divmod enumerate filter float format frozenset '
    + 'getattr hasattr hash hex id input int isinstance issubclass iter len list map max min next object open ord pow '
    + 'print range repr reversed round set setattr slice sorted str sum super tuple type vars zip llm_query '
    + 'llm_query_batched FINAL FINAL_VAR self').split(' '));
  const RULES = [
    ['comment', /#[^\n]*/y],
    ['string', /[rRbBuUfF]{0,2}("""[\s\S]*?(?:"""|$(?![\s\S]))|'''[\s\S]*?(?:'''|$(?![\s\S]))|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?)/y],
    ['number', /(?:0[xX][\da-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)/y],
    ['decorator', /@[A-Za-z_][\w.]*/y],
    ['name', /[A-Za-z_][A-Za-z0-9_]*/y],
    ['space', /\s+/y],
    ['op', /[-+*/%=<>!&|^~:.,;()[\]{}@]+/y],
    ['other', /[\s\S]/y],
  ];

  function tokens(code) {
    const out = [];
    let at = 0, afterDef = false;
    while (at < code.length) {
      for (const [kind, re] of RULES) {
        re.lastIndex = at;
        const m = re.exec(code);
        if (!m || m[0].length === 0) continue;
        let type = kind;
        if (kind === 'name') {
          if (afterDef) type = 'def';
          else if (KEYWORDS.has(m[0])) type = 'keyword';
          else if (BUILTINS.has(m[0])) type = 'builtin';
          afterDef = m[0] === 'def' || m[0] === 'class';
        } else if (kind !== 'space') {
          afterDef = false;
        }
        out.push([type, m[0]]);
        at += m[0].length;
        break;
      }
    }
    return out;
  }

  function highlight(code) {
    const fragment = document.createDocumentFragment();
    for (const [type, text] of tokens(code)) {
      if (type === 'space' || type === 'name' || type === 'other') {
        fragment.appendChild(document.createTextNode(text));
      } else {
        const span = document.createElement('span');
        span.className = 'tok-' + type;
        span.textContent = text;
        fragment.appendChild(span);
      }
    }
    return fragment;
  }

  window.RlmPython = { tokens, highlight };
})();
