package dev.rlmmcp.e2e.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Gemini CLI, Qwen Code or opencode of {@code e2e/} (pinned in the lock file), run headless as a script
 * runs it ({@code gemini -p PROMPT --yolo}, {@code qwen -p PROMPT --yolo}, {@code opencode run PROMPT}) with
 * rlm-mcp registered by the README's snippet for that client, and a {@link ToolCallingModel} as its model.
 * Everything it keeps is under {@code home}; every process it starts (the stdio server, its kernels) is seen
 * while it runs, so that what outlives it can be told.
 */
public final class AgentCli {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The clients, each with its README section's title and its binary in e2e/node_modules/.bin. */
    public enum Kind {
        GEMINI("Gemini CLI", "gemini"),
        QWEN("Qwen Code", "qwen"),
        OPENCODE("opencode", "opencode");

        public final String title;
        final String binary;

        Kind(String title, String binary) {
            this.title = title;
            this.binary = binary;
        }
    }

    private final Kind kind;
    private final Path home;
    private final Path work;
    private final ToolCallingModel model;

    /**
     * A client of {@code kind} whose home is {@code home} and project directory {@code work}, with
     * {@code registration} (the README's JSON block for it, paths filled in) as its MCP configuration.
     */
    public AgentCli(Kind kind, Path home, Path work, ToolCallingModel model, String registration) throws IOException {
        this.kind = kind;
        this.home = Files.createDirectories(home);
        this.work = Files.createDirectories(work);
        this.model = model;
        Files.createDirectories(home.resolve("tmp"));
        ObjectNode config = (ObjectNode) JSON.readTree(registration);
        switch (kind) {
            case GEMINI, QWEN -> {
                Path dir = Files.createDirectories(home.resolve(kind == Kind.GEMINI ? ".gemini" : ".qwen"));
                config.putObject("security")
                        .putObject("auth")
                        .put("selectedType", kind == Kind.GEMINI ? "gemini-api-key" : "openai");
                Files.writeString(dir.resolve("settings.json"), config.toPrettyString());
                // a headless run in a folder not trusted leaves MCP servers out (README: the client's quirks)
                Files.writeString(
                        dir.resolve("trustedFolders.json"),
                        JSON.createObjectNode()
                                .put(work.toString(), "TRUST_FOLDER")
                                .toString());
            }
            case OPENCODE -> {
                config.put("model", "scripted/scripted");
                ObjectNode provider = config.putObject("provider").putObject("scripted");
                provider.put("npm", "@ai-sdk/openai-compatible").put("name", "scripted model");
                provider.putObject("options")
                        .put("baseURL", model.chatBaseUrl())
                        .put("apiKey", "not-a-real-key");
                provider.putObject("models").putObject("scripted").put("name", "scripted");
                Files.writeString(work.resolve("opencode.json"), config.toPrettyString());
            }
        }
    }

    /** Runs the client headless on {@code prompt}. */
    public CliProcess.Run run(String prompt, Duration timeout) throws IOException, InterruptedException {
        Map<String, String> env = CliProcess.environment(home);
        env.put("NO_COLOR", "1");
        switch (kind) {
            case GEMINI -> {
                env.put("GEMINI_API_KEY", "not-a-real-key");
                env.put("GOOGLE_GEMINI_BASE_URL", model.baseUrl());
            }
            case QWEN -> {
                env.put("OPENAI_API_KEY", "not-a-real-key");
                env.put("OPENAI_BASE_URL", model.chatBaseUrl());
                env.put("OPENAI_MODEL", "scripted");
            }
            case OPENCODE -> env.put("OPENCODE_DISABLE_AUTOUPDATE", "1");
        }
        List<String> args = kind == Kind.OPENCODE ? List.of("run", prompt) : List.of("-p", prompt, "--yolo");
        return CliProcess.run(kind.binary, args, work, env, timeout);
    }

    /** The README's JSON block {@code n} (0: stdio, 1: HTTP) of the client's registration. */
    public static String readmeSnippet(Kind kind, int n) throws IOException {
        String readme = Files.readString(McpDriver.projectRoot().resolve("README.md"));
        int at = readme.indexOf("**" + kind.title + "**");
        if (at < 0) {
            throw new AssertionError("no **" + kind.title + "** section in the README");
        }
        Matcher block = Pattern.compile("```json\n(.*?)```", Pattern.DOTALL).matcher(readme.substring(at));
        for (int i = 0; i <= n; i++) {
            if (!block.find()) {
                throw new AssertionError("no JSON block " + i + " in the README's " + kind.title + " section");
            }
        }
        JsonNode parsed = JSON.readTree(block.group(1));
        return parsed.toString();
    }
}
