package dev.rlmmcp.tools.standard;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.bridge.BridgedServers;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.data.DataRoot;
import dev.rlmmcp.data.DataSources;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.rlm.RlmConfig;
import dev.rlmmcp.rlm.RlmRuns;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.ToolCatalog;
import dev.rlmmcp.tools.code.RunPythonTool;
import dev.rlmmcp.tools.data.ListBucketsTool;
import dev.rlmmcp.tools.data.ListS3Tool;
import dev.rlmmcp.tools.data.LoadS3Tool;
import dev.rlmmcp.tools.data.LoadUrlTool;
import dev.rlmmcp.tools.data.UploadUrlTool;
import dev.rlmmcp.tools.repl.AnswerTool;
import dev.rlmmcp.tools.repl.ClearTool;
import dev.rlmmcp.tools.repl.ExecuteTool;
import dev.rlmmcp.tools.repl.ListVarsTool;
import dev.rlmmcp.tools.repl.LoadDataTool;
import dev.rlmmcp.tools.repl.LoadFileTool;
import dev.rlmmcp.tools.repl.MemoryTool;
import dev.rlmmcp.tools.repl.PendingTool;
import dev.rlmmcp.tools.repl.VarInfoTool;
import dev.rlmmcp.tools.session.DeleteSessionTool;
import dev.rlmmcp.tools.session.FinalizeTool;
import dev.rlmmcp.tools.session.GetTraceTool;
import dev.rlmmcp.tools.session.GetVarTool;
import dev.rlmmcp.tools.session.InitContextTool;
import dev.rlmmcp.tools.session.ListSessionsTool;
import dev.rlmmcp.tools.session.RunReplTool;
import dev.rlmmcp.tools.session.SolveTool;
import java.util.ArrayList;
import java.util.List;

/**
 * rlm-mcp's tools, every one that can work in the configuration, in one catalog: the S3 tools only where the
 * environment names S3 ({@link dev.rlmmcp.data.S3Settings#named}), rlm_solve only where it can have a model
 * (with none but the client's, it is listed only to clients that sample: {@link RlmTool#needsSampling}). Apart
 * from {@link ToolCatalog} because the tools' packages (repl, session, code, data) are built on the tools
 * package: the catalog of all of them sits above both.
 */
public final class StandardTools {

    private StandardTools() {}

    /** With RLM runs configured by default ({@link RlmConfig#DEFAULTS}). */
    public static ToolCatalog catalog(
            Sessions sessions, DataRoot dataRoot, BridgedServers bridge, DataSources sources) {
        return catalog(sessions, dataRoot, bridge, sources, new RlmRuns(sessions, RlmConfig.DEFAULTS));
    }

    public static ToolCatalog catalog(
            Sessions sessions, DataRoot dataRoot, BridgedServers bridge, DataSources sources, RlmRuns runs) {
        ObjectMapper json = sessions.json();
        List<RlmTool> tools = new ArrayList<>(List.of(
                new ExecuteTool(sessions, runs),
                new AnswerTool(sessions),
                new PendingTool(sessions),
                new LoadDataTool(sessions),
                new LoadFileTool(sessions, dataRoot),
                new ListVarsTool(sessions),
                new VarInfoTool(sessions),
                new ClearTool(sessions),
                new MemoryTool(sessions),
                new InitContextTool(sessions),
                new RunReplTool(sessions, runs),
                new GetVarTool(sessions),
                new FinalizeTool(sessions),
                new GetTraceTool(sessions),
                new ListSessionsTool(sessions),
                new DeleteSessionTool(sessions),
                new RunPythonTool(sessions, bridge, runs),
                new LoadUrlTool(sessions, sources)));
        if (sessions.llm().solverModel() != LlmService.SolverModel.NONE) {
            tools.add(new SolveTool(sessions, runs, dataRoot, sources));
        }
        if (sources.s3().settings().named()) {
            tools.addAll(List.of(
                    new LoadS3Tool(sessions, sources),
                    new ListBucketsTool(sources.s3(), json),
                    new ListS3Tool(sources.s3(), json),
                    new UploadUrlTool(sources, json)));
        }
        return new ToolCatalog(tools, json);
    }
}
