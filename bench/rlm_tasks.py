"""Offline, seeded task generators for the RLM benchmark, and their scorers.

- niah: S-NIAH style, one needle ("The magic number is N.") in a haystack of filler lines;
- oolong: OOLONG style aggregation, records with a label each; the answer is every label's count;
- pairs: OOLONG-Pairs style, records with a code each; the answer is every pair of users sharing one.

Sizes are in tokens at ~4 characters a token. The same (task, tokens, seed) always gives the same text.

    python3 bench/rlm_tasks.py niah --tokens 65536 --out FILE [--seed N]

writes the context to FILE and prints the question and the expected answer as JSON.
"""
import argparse
import collections
import dataclasses
import itertools
import json
import random
import re
import sys

CHARS_PER_TOKEN = 4
SIZES = [2 ** k for k in range(13, 21)]  # 8K ... 1M tokens

QUESTIONS = {
    "niah": "Find the magic number hidden in the context. Answer with the number only.",
    "oolong": ("Count the labels in the context: how many records carry each label? Answer with a JSON object "
               "mapping each label to its count."),
    "pairs": ("Find every pair of users whose records have the same code. Answer with one pair of user ids per "
              "line as id1,id2 (smaller id first), sorted."),
}
LABELS = ["abbreviation", "description", "entity", "human", "location", "numeric"]
LABEL_WEIGHTS = [1, 6, 5, 4, 3, 2]
CITIES = ["Lyon", "Oslo", "Lima", "Pune", "Cork", "Kobe", "Graz", "Tula", "Bari", "Nice"]
WORDS = ("river stone quiet morning paper window garden yellow table market winter bridge letter orange "
         "candle forest pocket silver button harbor meadow ladder kettle violin marble lantern pepper "
         "saddle thunder velvet walnut anchor biscuit canyon dolphin ember falcon glacier hammock island "
         "jasmine kitten lemon mirror nickel oyster pillow quartz ribbon spindle tulip umbrella valley "
         "wagon yarrow zephyr the a of and under over near beside with without slowly gently often "
         "rarely walks sings waits carries paints folds counts holds finds keeps").split()


@dataclasses.dataclass
class Task:
    name: str
    tokens: int
    seed: int
    question: str
    context: str
    expected: object  # niah: str; oolong: {label: count}; pairs: [[a, b], ...] sorted

    def expected_text(self):
        """The expected answer as a model would write it."""
        if self.name == "niah":
            return self.expected
        if self.name == "oolong":
            return json.dumps(self.expected)
        return "\n".join(f"{a},{b}" for a, b in self.expected)


def sentences(rng, count):
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."
            for _ in range(count)]


def fill_lines(rng, chars, make_line):
    """Lines from make_line(i) until they hold about `chars` characters."""
    lines, total = [], 0
    while total < chars:
        line = make_line(len(lines))
        lines.append(line)
        total += len(line) + 1
    return lines


def niah(tokens, seed=0):
    rng = random.Random(f"niah-{tokens}-{seed}")
    pool = sentences(rng, 4000)
    number = str(rng.randrange(1_000_000, 10_000_000))
    needle = f"The magic number is {number}."
    lines = fill_lines(rng, tokens * CHARS_PER_TOKEN - len(needle) - 1, lambda i: rng.choice(pool))
    lines.insert(rng.randrange(len(lines) + 1), needle)
    return Task("niah", tokens, seed, QUESTIONS["niah"], "\n".join(lines) + "\n", number)


def oolong(tokens, seed=0):
    rng = random.Random(f"oolong-{tokens}-{seed}")
    pool = sentences(rng, 2000)
    counts = collections.Counter()

    def record(i):
        label = rng.choices(LABELS, LABEL_WEIGHTS)[0]
        counts[label] += 1
        return (f"Date: 2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} || User: {rng.randrange(10000, 100000)} "
                f"|| Instance: {rng.choice(pool)} || Label: {label}")

    lines = fill_lines(rng, tokens * CHARS_PER_TOKEN, record)
    return Task("oolong", tokens, seed, QUESTIONS["oolong"], "\n".join(lines) + "\n", dict(sorted(counts.items())))


def pairs(tokens, seed=0):
    """About one code in 30 is shared by two to four records; every other code is unique."""
    rng = random.Random(f"pairs-{tokens}-{seed}")
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    target = tokens * CHARS_PER_TOKEN
    count = max(8, target // 45)  # more records than fit; the text is cut at the size asked
    users = rng.sample(range(100000, 1000000), count)
    codes, used = [], set()

    def new_code():
        while True:
            code = "".join(rng.choice(alphabet) for _ in range(6))
            if code not in used:
                used.add(code)
                return code

    while len(codes) < count:
        group = rng.choice([2, 2, 2, 3, 4]) if rng.random() < 1 / 30 else 1
        codes.extend([new_code()] * min(group, count - len(codes)))
    rng.shuffle(codes)
    lines, total = [], 0
    for i, (user, code) in enumerate(zip(users, codes)):
        if total >= target:
            break
        lines.append(f"Record {i} || User: {user} || City: {rng.choice(CITIES)} || Code: {code}")
        total += len(lines[-1]) + 1
    groups = collections.defaultdict(list)
    for user, code in zip(users, codes[:len(lines)]):
        groups[code].append(user)
    expected = sorted([a, b] for ids in groups.values() for a, b in itertools.combinations(sorted(ids), 2))
    return Task("pairs", tokens, seed, QUESTIONS["pairs"], "\n".join(lines) + "\n", expected)


GENERATORS = {"niah": niah, "oolong": oolong, "pairs": pairs}


def generate(name, tokens, seed=0):
    if name not in GENERATORS:
        raise ValueError(f"unknown task {name!r}: one of {', '.join(GENERATORS)}")
    return GENERATORS[name](tokens, seed)


# ------------------------------------------------------------------------------------------------- scorers

def score_niah(expected, answer):
    """1.0 when the answer's only number is the needle's (a bare number, or in a sentence), else 0.0."""
    numbers = re.findall(r"\d+", answer or "")
    return 1.0 if numbers == [expected] else 0.0


def parse_counts(answer):
    match = re.search(r"\{.*\}", answer or "", re.S)
    if not match:
        return None
    try:
        found = json.loads(match.group(0))
        return {str(k).strip().lower(): int(v) for k, v in found.items()}
    except (ValueError, TypeError, AttributeError):
        return None


def score_oolong(expected, answer):
    """Exact match of every label's count (1.0 or 0.0)."""
    return 1.0 if parse_counts(answer) == {k.lower(): v for k, v in expected.items()} else 0.0


def parse_pairs(answer):
    return {tuple(sorted((int(a), int(b)))) for a, b in re.findall(r"(\d+)\s*,\s*(\d+)", answer or "")}


def score_pairs(expected, answer):
    """F1 of the pairs found against the expected pairs (either order within a pair counts)."""
    want = {tuple(p) for p in expected}
    got = parse_pairs(answer)
    if not want and not got:
        return 1.0
    hits = len(want & got)
    if not hits:
        return 0.0
    precision, recall = hits / len(got), hits / len(want)
    return 2 * precision * recall / (precision + recall)


SCORERS = {"niah": score_niah, "oolong": score_oolong, "pairs": score_pairs}


def score(task, answer):
    return SCORERS[task.name](task.expected, answer)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write an RLM benchmark task's context; print its expected answer.")
    parser.add_argument("task", choices=sorted(GENERATORS))
    parser.add_argument("--tokens", type=int, default=2 ** 13, help="size in tokens (~4 characters each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="file to write the context to")
    args = parser.parse_args(argv)
    if args.tokens < 64:
        parser.error("--tokens must be at least 64")
    task = generate(args.task, args.tokens, args.seed)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(task.context)
    print(json.dumps({"task": task.name, "tokens": task.tokens, "seed": task.seed, "chars": len(task.context),
                      "question": task.question, "expected": task.expected}))


if __name__ == "__main__":
    sys.exit(main())
