import json
import subprocess
import sys

from conftest import SOURCE
from rlm_harness.limits import Limits, rss_bytes


def run(code):
    done = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {SOURCE!r})\n" + code],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_rss_is_positive():
    assert rss_bytes() > 1 << 20


def test_limits_set_hard_and_soft_alike():
    got = run("import json, resource\nfrom rlm_harness.limits import Limits\n"
              "Limits({'nofile': 100, 'fsize': 1 << 20})\n"
              "print(json.dumps([resource.getrlimit(resource.RLIMIT_NOFILE), "
              "resource.getrlimit(resource.RLIMIT_FSIZE)]))")
    assert got == [[100, 100], [1 << 20, 1 << 20]]


def test_a_too_large_write_fails_instead_of_killing():
    got = run("import json, os, tempfile\nfrom rlm_harness.limits import Limits\nLimits({'fsize': 4096})\n"
              "f = tempfile.TemporaryFile()\n"
              "try:\n    os.write(f.fileno(), b'x' * 8192)\n    os.write(f.fileno(), b'x')\n    print('null')\n"
              "except OSError as e:\n    print(json.dumps(e.errno))")
    import errno
    assert got == errno.EFBIG


def test_cpu_limit_is_armed_per_request():
    got = run("import json, resource, time\nfrom rlm_harness.limits import Limits\n"
              "limits = Limits({'cpu_per_request_s': 7})\nlimits.arm_cpu()\n"
              "print(json.dumps([resource.getrlimit(resource.RLIMIT_CPU)[0], int(time.process_time())]))")
    assert got[0] == got[1] + 7


def test_no_limits_change_nothing():
    import resource
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    limits = Limits({})
    limits.arm_cpu()
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == before and limits.cpu_per_request is None
