import sys
import traceback

import pytest

from rlm_harness.callbacks import CallbackError, Pending
from rlm_harness.mcp import MCPError, McpBridge, McpProxy, run_coroutine


class StubCallbacks:
    def __init__(self, answer):
        self.answer, self.requests = answer, []

    def submit(self, kind, request):
        self.requests.append((kind, request))
        pending = Pending(len(self.requests), kind)
        pending.set(self.answer(request))
        return pending


class StubKernel:
    def __init__(self, answer):
        self.callbacks = StubCallbacks(answer)


@pytest.fixture(autouse=True)
def clean_modules():
    saved = dict(sys.modules)
    yield
    for name in [n for n in sys.modules if n not in saved]:
        del sys.modules[name]
    sys.modules.update(saved)


SPEC = {"servers": [{"name": "calc-server", "alias": "calc_server",
                     "tools": [{"name": "get-sum", "alias": "get_sum", "description": "Adds.", "input_schema": {}}]}],
        "discovered": ["calc-server", "other"]}


def test_run_coroutine_returns_the_value():
    async def answer():
        return 42

    assert run_coroutine(answer()) == 42


def test_call_tool_sends_an_mcp_callback():
    bridge = McpBridge(StubKernel(lambda r: {"ok": True, "result": {"content": [{"type": "text", "text": "3"}]}}))
    result = run_coroutine(bridge.call_tool("calc-server", "get-sum", {"a": 1, "b": 2}))
    assert result == {"content": [{"type": "text", "text": "3"}]}
    assert bridge.kernel.callbacks.requests == [
        ("mcp", {"op": "call_tool", "server": "calc-server", "tool": "get-sum", "arguments": {"a": 1, "b": 2}})]


def test_a_tool_error_raises_mcperror_with_the_result():
    answer = {"isError": True, "content": [{"type": "text", "text": "bad"}, {"type": "text", "text": "input"}]}
    bridge = McpBridge(StubKernel(lambda r: {"ok": True, "result": answer}))
    with pytest.raises(MCPError) as e:
        run_coroutine(bridge.call_tool("s", "t"))
    assert (str(e.value), e.value.code, e.value.result) == ("s.t failed: bad input", "TOOL_ERROR", answer)


def test_arguments_must_be_a_dict():
    bridge = McpBridge(StubKernel(lambda r: pytest.fail("no request expected")))
    with pytest.raises(MCPError) as e:
        run_coroutine(bridge.call_tool("s", "t", [1]))
    assert e.value.code == "INVALID_ARGUMENTS" and str(e.value) == "arguments must be a dict, not list"


def test_a_refused_call_raises_mcperror_with_the_hosts_code():
    bridge = McpBridge(StubKernel(lambda r: {"ok": False, "error": {"code": "UNKNOWN_SERVER", "message": "no x"}}))
    with pytest.raises(MCPError) as e:
        run_coroutine(bridge.list_tools("x"))
    assert (e.value.code, str(e.value)) == ("UNKNOWN_SERVER", "no x")

    class Closed:
        def submit(self, kind, request):
            raise CallbackError("NOT_RUNNING", "not now", kind)

    bridge.kernel.callbacks = Closed()
    with pytest.raises(MCPError) as e:
        run_coroutine(bridge.list_servers())
    assert e.value.code == "NOT_RUNNING"
    assert traceback.format_exception_only(MCPError, e.value)[-1] == "MCPError: not now\n"


def test_install_loads_modules_and_proxies():
    bridge = McpBridge(StubKernel(lambda r: {"ok": True, "result": r}))
    ns = {}
    bridge.install(SPEC, ns)
    proxy = ns["mcp_calc_server"]
    assert isinstance(proxy, McpProxy) and ns["mcp_servers"] == {"calc-server": proxy}
    assert ns["LOADED_MCP_SERVERS"] == ("calc-server",) and ns["mcp"] is sys.modules["mcp"]
    module = sys.modules["mcp.servers.calc_server"]
    assert module.__all__ == ["get_sum"] and module.TOOL_MAP["get_sum"]["name"] == "get-sum"
    assert module.get_sum.__doc__ == "Adds."
    called = run_coroutine(proxy.get_sum(a=1))
    assert called["tool"] == "get-sum" and called["arguments"] == {"a": 1}
    assert run_coroutine(proxy.unlisted())["tool"] == "unlisted"
    import mcp.runtime
    assert mcp.runtime.discovered_servers() == ("calc-server", "other")
    assert mcp.runtime.describe_server("calc-server")["alias"] == "calc_server"
    with pytest.raises(MCPError) as e:
        mcp.runtime.describe_server("other")
    assert e.value.code == "SERVER_NOT_ALLOWED"
    assert "loaded: calc-server" in str(e.value)


def test_installing_again_replaces_the_last_runs_servers():
    bridge = McpBridge(StubKernel(lambda r: {"ok": True, "result": r}))
    ns = {}
    bridge.install(SPEC, ns)
    bridge.install({"servers": []}, ns)
    assert "mcp_calc_server" not in ns and "mcp.servers.calc_server" not in sys.modules
    assert ns["LOADED_MCP_SERVERS"] == () and ns["mcp_servers"] == {}


def test_proxy_surface():
    bridge = McpBridge(StubKernel(lambda r: {"ok": True, "result": r}))
    proxy = McpProxy(bridge, SPEC["servers"][0])
    assert repr(proxy) == "<MCP server 'calc-server': get_sum>"
    assert dir(proxy) == ["get_sum", "list_tools"]
    with pytest.raises(AttributeError):
        proxy.__wrapped__
    assert proxy.get_sum.__name__ == "get_sum" and proxy.get_sum.__module__ == "__main__"
    assert run_coroutine(proxy.list_tools()) == {"op": "list_tools", "server": "calc-server"}
