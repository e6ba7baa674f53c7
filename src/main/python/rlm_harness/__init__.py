"""rlm-mcp kernel harness: one persistent CPython REPL driven over a framed pipe (see protocol).

The host runs it as `python -I -B <dir>`, where <dir> holds this package and a two-line __main__.py that
calls main.main() (`python -m rlm_harness` does the same). The parts: protocol (frames, Fail, the reserved
names), capture (stdout/stderr), callbacks (requests to the host, llm_query), children (rlm_query: child
RLMs and their contexts), answers (the `answer` dict, FINAL, FINAL_VAR, SHOW_VARS), guard (the import policy),
sizing, mcp (code-execution mode), store (the snapshot directory), loaders, limits, and the Kernel
(kernel, with memory and snapshots) that main serves requests with.

User code may `import rlm_harness`: every name the single-file harness had is here (but main, now the
module holding main()), so code and snapshots that name rlm_harness.X keep working, and KERNEL is the
running Kernel (its callbacks, for the host's tests).
"""
from .answers import ANSWER, answer_functions, is_answer, reported
from .callbacks import CallbackError, Callbacks, LLMQueryError, Pending, llm_functions
from .children import INLINE_LIMIT, PREVIEW_CHARS, RLMQueryError, Transfer, describe, failure, pickled, rlm_functions
from .capture import FULL_OUTPUT_KEEP, Capture, CaptureStream, FdCapture, Output
from .guard import ImportGuard
from .kernel import ASYNCIO_DIR, CO_COROUTINE, Kernel
from .limits import Limits, rss_bytes
from .loaders import (DATA_TYPES, PICKLE, ChunkFile, check_data_type, check_name, decode, decoded, load_file,
                      loaded_size, parse_payload, parse_text, payload_texts, read_csv, split_lines, text_lines,
                      text_stream, unpickle)
from .mcp import MCPError, McpBridge, McpProxy, run_coroutine
from .memory import Memory
from .protocol import (ABORTED, CHUNK_HEAD, FRAME_HEAD, PROTOCOL_VERSION, RESERVED, STREAMED, Channel, Chunks, Fail,
                       enlarge_pipe)
from .snapshots import DYNAMIC_LOOKUP, IMMUTABLE, PROBE_LIMIT, Snapshots
from .sizing import LONG_PREVIEW, PREVIEW, Sizer, VarMeta, describe_shape, echo, human, iso, preview
from .store import (RAW_THRESHOLD, TRANSFER_DIR, WRITE_CHUNK, NotPersisted, Store, definitions, raw_buffer, read_exact,
                    repl_defined, utf8_view)

KERNEL = None  # the running Kernel, set by main.main()
