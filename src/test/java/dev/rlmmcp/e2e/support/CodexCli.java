package dev.rlmmcp.e2e.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Codex CLI of {@code e2e/} ({@code @openai/codex}, pinned in the lock file), run the way a script runs
 * it: {@code codex exec --json PROMPT}, and {@code codex exec resume THREAD PROMPT}. Everything it keeps
 * (its home, config, sessions, temporary files) is under {@code home}; its model is a
 * {@link ResponsesEndpoint} on loopback, declared as a custom provider. Every process it starts (the MCP
 * servers it spawns, their kernels) is seen while it runs, so that what outlives it can be told and ended.
 */
public final class CodexCli {

    private static final ObjectMapper JSON = new ObjectMapper();
    static final String KEY_VARIABLE = "SCRIPTED_MODEL_KEY";

    /** One {@code codex exec} run: its exit code, its JSONL events and its log. */
    public record Run(int exit, String stdout, String stderr, Duration took, Set<ProcessHandle> started) {

        /** The thread (session) id of Codex's {@code thread.started} event. */
        public String threadId() {
            for (String line : stdout.split("\n")) {
                try {
                    JsonNode event = JSON.readTree(line);
                    if ("thread.started".equals(event.path("type").asText())) {
                        return event.path("thread_id").asText();
                    }
                } catch (IOException notJson) {
                    // Codex prints only events on stdout with --json; skip anything else
                }
            }
            throw new AssertionError("no thread.started event in Codex's output:\n" + this);
        }

        @Override
        public String toString() {
            return "codex exit " + exit + " after " + took.toMillis() + " ms\n--- stdout ---\n" + stdout
                    + "\n--- stderr ---\n" + stderr;
        }
    }

    private final Path home;
    private final Path workDir;

    /**
     * A Codex whose home is {@code home} ({@code HOME}, {@code CODEX_HOME=home/.codex}, {@code TMPDIR}) and
     * whose working directory is {@code workDir}, with this {@code config.toml}.
     */
    public CodexCli(Path home, Path workDir, String configToml) throws IOException {
        this.home = home;
        this.workDir = workDir;
        Files.createDirectories(home.resolve(".codex"));
        Files.createDirectories(home.resolve("tmp"));
        Files.createDirectories(workDir);
        Files.writeString(home.resolve(".codex/config.toml"), configToml);
    }

    /** The head of a config.toml that makes {@code endpoint} Codex's model provider (no OpenAI account). */
    public static String providerConfig(ResponsesEndpoint endpoint) {
        return """
                model_provider = "scripted"

                [model_providers.scripted]
                name = "scripted model"
                base_url = "%s"
                wire_api = "responses"
                env_key = "%s"
                request_max_retries = 0
                stream_max_retries = 0

                """.formatted(endpoint.baseUrl(), KEY_VARIABLE);
    }

    public Run exec(String prompt, Duration timeout) throws IOException, InterruptedException {
        return run(List.of("exec", "--json", "--skip-git-repo-check", prompt), timeout);
    }

    public Run resume(String threadId, String prompt, Duration timeout) throws IOException, InterruptedException {
        return run(List.of("exec", "resume", "--json", "--skip-git-repo-check", threadId, prompt), timeout);
    }

    private Run run(List<String> args, Duration timeout) throws IOException, InterruptedException {
        Map<String, String> env = CliProcess.environment(home);
        env.put("CODEX_HOME", home.resolve(".codex").toString());
        env.put(KEY_VARIABLE, "not-a-real-key");
        env.put("RUST_LOG", "warn,codex_core=info,codex_rmcp_client=info");
        CliProcess.Run run = CliProcess.run("codex", args, workDir, env, timeout);
        return new Run(run.exit(), run.stdout(), run.stderr(), run.took(), run.started());
    }
}
