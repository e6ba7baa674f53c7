"""The RLM benchmark's task generators and scorers (bench/rlm_tasks.py)."""
import collections
import itertools
import json
import os
import re
import subprocess
import sys

import pytest

BENCH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, os.pardir,
                                      "bench"))
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import rlm_tasks  # noqa: E402


@pytest.mark.parametrize("name", ["niah", "oolong", "pairs"])
@pytest.mark.parametrize("tokens", [2 ** 13, 2 ** 17])
def test_tasks_are_deterministic_and_of_the_size_asked(name, tokens):
    a, b = rlm_tasks.generate(name, tokens), rlm_tasks.generate(name, tokens)
    assert a.context == b.context and a.expected == b.expected
    assert rlm_tasks.generate(name, tokens, seed=1).context != a.context
    assert abs(len(a.context) - tokens * 4) < tokens * 4 * 0.02


def test_every_size_of_the_benchmark_is_made():
    assert rlm_tasks.SIZES == [8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576]
    task = rlm_tasks.generate("niah", rlm_tasks.SIZES[-1])
    assert len(task.context) >= 4 * 2 ** 20 and task.context.count("magic") == 1


def test_niah_hides_one_needle_with_the_expected_number():
    for seed in range(5):
        task = rlm_tasks.generate("niah", 2 ** 13, seed)
        assert re.findall(r"The magic number is (\d+)\.", task.context) == [task.expected]
        assert task.context.splitlines().count(f"The magic number is {task.expected}.") == 1


def test_oolong_counts_are_the_labels_of_the_records():
    task = rlm_tasks.generate("oolong", 2 ** 14)
    lines = task.context.splitlines()
    row = r"Date: \S+ \|\| User: \d+ \|\| Instance: [^|]+ \|\| Label: [a-z]+"
    assert all(re.fullmatch(row, line) for line in lines)
    assert task.expected == dict(collections.Counter(line.rsplit("Label: ", 1)[1] for line in lines))
    assert set(task.expected) == set(rlm_tasks.LABELS)


def test_pairs_are_every_two_users_sharing_a_code():
    task = rlm_tasks.generate("pairs", 2 ** 14)
    groups = collections.defaultdict(list)
    for line in task.context.splitlines():
        user, code = re.fullmatch(r"Record \d+ \|\| User: (\d+) \|\| City: \w+ \|\| Code: (\w+)", line).groups()
        groups[code].append(int(user))
    want = sorted([a, b] for ids in groups.values() for a, b in itertools.combinations(sorted(ids), 2))
    assert task.expected == want and 20 < len(want) < 400
    assert all(len(ids) <= 4 for ids in groups.values())


def test_scorers():
    niah = rlm_tasks.generate("niah", 2 ** 13)
    assert rlm_tasks.score(niah, niah.expected) == 1.0
    assert rlm_tasks.score(niah, f"The magic number is {niah.expected}.") == 1.0
    assert rlm_tasks.score(niah, "1234") == 0.0
    assert rlm_tasks.score(niah, f"{niah.expected} or 1234") == 0.0
    assert rlm_tasks.score(niah, None) == 0.0

    oolong = rlm_tasks.generate("oolong", 2 ** 13)
    assert rlm_tasks.score(oolong, oolong.expected_text()) == 1.0
    assert rlm_tasks.score(oolong, "Counts: " + json.dumps({k.upper(): v for k, v in oolong.expected.items()})) == 1.0
    off = dict(oolong.expected, human=oolong.expected["human"] + 1)
    assert rlm_tasks.score(oolong, json.dumps(off)) == 0.0
    assert rlm_tasks.score(oolong, "no idea") == 0.0

    pairs = rlm_tasks.generate("pairs", 2 ** 13)
    assert rlm_tasks.score(pairs, pairs.expected_text()) == 1.0
    reversed_order = "\n".join(f"{b}, {a}" for a, b in reversed(pairs.expected))
    assert rlm_tasks.score(pairs, reversed_order) == 1.0
    half = pairs.expected[:len(pairs.expected) // 2]
    f1 = rlm_tasks.score(pairs, "\n".join(f"{a},{b}" for a, b in half + [[1, 2]]))
    precision, recall = len(half) / (len(half) + 1), len(half) / len(pairs.expected)
    assert f1 == pytest.approx(2 * precision * recall / (precision + recall))
    assert rlm_tasks.score(pairs, "") == 0.0


def test_command_line_writes_the_context_and_prints_the_answer(tmp_path):
    out = tmp_path / "niah.txt"
    run = subprocess.run([sys.executable, os.path.join(BENCH, "rlm_tasks.py"), "niah", "--tokens", "65536",
                          "--out", str(out)], capture_output=True, text=True, check=True)
    printed = json.loads(run.stdout)
    task = rlm_tasks.generate("niah", 65536)
    assert out.read_text() == task.context and printed["expected"] == task.expected
    assert printed["question"] == task.question and printed["chars"] == len(task.context)
    bad = subprocess.run([sys.executable, os.path.join(BENCH, "rlm_tasks.py"), "haystack", "--out", str(out)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice: 'haystack'" in bad.stderr
