"""Code-execution mode: the mcp package user code imports and the mcp_<alias> proxies, over "mcp" callbacks."""
import sys
import types

from .callbacks import CallbackError


class MCPError(RuntimeError):
    """A call to a bridged MCP server failed. code is a stable word: UNKNOWN_SERVER, SERVER_NOT_ALLOWED,
    UNKNOWN_TOOL, INVALID_ARGUMENTS, TOOL_ERROR (the tool answered isError; result holds its answer),
    SERVER_UNAVAILABLE, SERVER_ERROR, TIMEOUT, NOT_AVAILABLE."""

    def __init__(self, message, code="ERROR", result=None):
        super().__init__(message)
        self.code, self.result = code, result


MCPError.__module__ = "__main__"  # a traceback reads "MCPError: ...", as from the single-file harness


class McpBridge:
    """Kernel side of code-execution mode: the mcp.runtime module and the mcp_<alias> proxies. Every call
    goes to the host as an "mcp" callback; the host decides which servers this run may reach."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.servers, self.discovered = (), ()
        self.executor = None
        self.runtime = self._modules()

    async def request(self, payload):
        import asyncio
        import concurrent.futures
        try:
            pending = self.kernel.callbacks.submit("mcp", payload)
        except CallbackError as e:
            raise MCPError(str(e), e.code) from None
        if self.executor is None:
            self.executor = concurrent.futures.ThreadPoolExecutor(32, thread_name_prefix="rlm-mcp")
        try:
            return await asyncio.get_running_loop().run_in_executor(self.executor, pending.result)
        except CallbackError as e:
            raise MCPError(str(e), e.code) from None

    async def call_tool(self, server, tool, arguments=None):
        if arguments is not None and not isinstance(arguments, dict):
            raise MCPError(f"arguments must be a dict, not {type(arguments).__name__}", "INVALID_ARGUMENTS")
        result = await self.request({"op": "call_tool", "server": server, "tool": tool, "arguments": arguments or {}})
        if isinstance(result, dict) and result.get("isError"):
            text = " ".join(c.get("text", "") for c in result.get("content") or () if isinstance(c, dict)).strip()
            raise MCPError(f"{server}.{tool} failed: {text or 'the tool reported an error'}", "TOOL_ERROR", result)
        return result

    async def list_tools(self, server):
        return await self.request({"op": "list_tools", "server": server})

    async def list_servers(self):
        return tuple(await self.request({"op": "list_servers"}))

    def describe_server(self, name):
        for server in self.servers:
            if server["name"] == name:
                return server
        raise MCPError(f"MCP server {name!r} is not loaded in this run; loaded: {', '.join(self.names()) or 'none'}",
                       "SERVER_NOT_ALLOWED")

    def names(self):
        return tuple(server["name"] for server in self.servers)

    def _modules(self):
        package = types.ModuleType("mcp", "Bridged MCP servers (rlm-mcp code-execution mode).")
        package.__path__ = []
        runtime = types.ModuleType("mcp.runtime", "Calls to the MCP servers this run may reach.")
        servers = types.ModuleType("mcp.servers", "One module per loaded MCP server, one function per tool.")
        servers.__path__ = []
        package.runtime, package.servers = runtime, servers
        runtime.MCPError = MCPError
        runtime.call_tool = self.call_tool
        runtime.list_tools = self.list_tools
        runtime.list_servers = self.list_servers
        runtime.describe_server = self.describe_server
        runtime.discovered_servers = lambda: tuple(self.discovered)
        runtime.list_loaded_server_metadata = lambda: tuple(self.servers)
        runtime.discovered_servers.__module__ = runtime.list_loaded_server_metadata.__module__ = "__main__"
        runtime.__all__ = ["MCPError", "call_tool", "list_tools", "list_servers", "describe_server",
                           "discovered_servers", "list_loaded_server_metadata"]
        self.package, self.server_modules = package, servers
        return runtime

    def install(self, spec, ns):
        """Loads this run's servers (spec: {"servers": [{name, alias, tools: [{name, alias, description,
        input_schema}]}], "discovered": [names]}) into sys.modules and the namespace, replacing the last run's."""
        self.servers, self.discovered = tuple(spec.get("servers", ())), tuple(spec.get("discovered", ()))
        for name in [n for n, v in ns.items() if isinstance(v, McpProxy)]:
            del ns[name]
        for name in [m for m in sys.modules if m.startswith("mcp.servers.")]:
            del sys.modules[name]
        self.server_modules.__all__ = []
        proxies = {}
        for server in self.servers:
            proxy = McpProxy(self, server)
            module = types.ModuleType(f"mcp.servers.{server['alias']}", f"MCP server {server['name']!r}")
            module.__all__, module.TOOLS = [], server.get("tools", [])
            module.TOOL_MAP = {tool["alias"]: tool for tool in module.TOOLS}
            for tool in module.TOOLS:
                setattr(module, tool["alias"], getattr(proxy, tool["alias"]))
                module.__all__.append(tool["alias"])
            setattr(self.server_modules, server["alias"], module)
            self.server_modules.__all__.append(server["alias"])
            sys.modules[module.__name__] = module
            proxies[server["name"]] = proxy
            ns["mcp_" + server["alias"]] = proxy
        sys.modules.update({"mcp": self.package, "mcp.runtime": self.runtime, "mcp.servers": self.server_modules})
        ns["mcp"] = self.package
        ns["mcp_servers"] = proxies
        ns["LOADED_MCP_SERVERS"] = self.names()


class McpProxy:
    """mcp_<alias>: each tool as an async method, by its alias (get-sum as get_sum) or its own name."""

    def __init__(self, bridge, server):
        self._bridge, self._name = bridge, server["name"]
        self._tools = {tool["alias"]: tool for tool in server.get("tools", ())}

    async def list_tools(self):
        return await self._bridge.list_tools(self._name)

    def __getattr__(self, alias):
        if alias.startswith("__"):
            raise AttributeError(alias)
        tool = self._tools.get(alias)
        target = tool["name"] if tool else alias
        bridge, server = self._bridge, self._name

        async def invoke(**arguments):
            return await bridge.call_tool(server, target, arguments)

        invoke.__name__ = invoke.__qualname__ = alias
        invoke.__module__ = "__main__"
        invoke.__doc__ = (tool or {}).get("description") or f"MCP tool {target} of {server}"
        return invoke

    def __dir__(self):
        return ["list_tools", *self._tools]

    def __repr__(self):
        return f"<MCP server {self._name!r}: {', '.join(self._tools) or 'no tools'}>"


def run_coroutine(coroutine):
    """Runs code compiled with top-level await to completion on a fresh event loop."""
    import asyncio
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(coroutine)
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        asyncio.set_event_loop(None)
        loop.close()
