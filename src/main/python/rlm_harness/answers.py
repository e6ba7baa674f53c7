"""How an RLM's loop is answered from the REPL: the `answer` dict, FINAL, FINAL_VAR and SHOW_VARS."""
from .sizing import human

ANSWER = "answer"


def is_answer(value):
    return isinstance(value, dict) and "ready" in value


def fresh():
    return {"content": "", "ready": False}


def answer_functions(kernel):
    """FINAL, FINAL_VAR and SHOW_VARS for user code, on the kernel's namespace."""
    ns = kernel.ns

    def FINAL(value):
        """Answers the RLM's question with str(value): sets answer["content"] and answer["ready"] = True."""
        answer = ns.get(ANSWER)
        if not isinstance(answer, dict):
            answer = ns[ANSWER] = fresh()
        answer["content"] = str(value)
        answer["ready"] = True

    def FINAL_VAR(name):
        """Answers the RLM's question with the variable called name: FINAL_VAR("result") is FINAL(result)."""
        if not isinstance(name, str):
            raise TypeError(f"FINAL_VAR takes a variable's name as a str, e.g. FINAL_VAR(\"result\"), not a "
                            f"{type(name).__name__}: to answer with a value, use FINAL(value)")
        name = name.strip().strip("\"'")
        if name in kernel.spilled:
            kernel.unspill(name)
        if name not in ns or not kernel.is_user_var(name, ns[name]):
            raise NameError(f"FINAL_VAR({name!r}): there is no variable {name!r}; set it first, or answer with "
                            "FINAL(value)")
        FINAL(ns[name])

    def SHOW_VARS():
        """The variables, one per line: name, type and size."""
        lines = []
        for name in sorted(kernel.user_names()):
            value = ns[name]
            meta = kernel.meta.get(name)
            size = meta.size if meta is not None else kernel.sizer.size(value)
            lines.append(f"{name}: {type(value).__name__}, {human(size)}")
        store = kernel.store
        for name in sorted(kernel.spilled):
            entry = store.entries.get(name, {}) if store is not None else {}
            lines.append(f"{name}: {entry.get('type', '?')}, {human(entry.get('size_bytes', 0))} (in the snapshot; "
                         "code that uses it loads it back)")
        return "\n".join(lines) if lines else "(no variables)"

    for f in (FINAL, FINAL_VAR, SHOW_VARS):
        f.__module__ = "__main__"
    return FINAL, FINAL_VAR, SHOW_VARS


def reported(value):
    """The exec reply's "answer": {"content": str, "ready": bool}, or None when value is no answer dict."""
    if not is_answer(value):
        return None
    try:
        ready = bool(value["ready"])
    except Exception:  # an object whose truth is undefined (an array, say) is no yes
        ready = False
    content = value.get("content", "")
    try:
        content = content if isinstance(content, str) else str(content)
    except Exception as e:  # a user-defined __str__ may raise anything
        content = f"<{type(content).__name__}: str() failed: {type(e).__name__}: {e}>"
    return {"content": content, "ready": ready}
