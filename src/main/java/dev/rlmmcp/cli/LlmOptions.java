package dev.rlmmcp.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.llm.OpenAiBackend;
import dev.rlmmcp.llm.OpenAiConfig;
import java.net.URI;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * Sub-LLM calls for llm_query: the backend and the default per-session limits. The API key is read
 * from RLM_LLM_API_KEY only (an option would show it in the process list) and never logged.
 */
final class LlmOptions {

    static final String API_KEY_ENV = "RLM_LLM_API_KEY";
    private static final Logger log = LoggerFactory.getLogger(LlmOptions.class);

    @Option(
            names = "--llm-backend",
            paramLabel = "MODE",
            defaultValue = "${env:RLM_LLM_BACKEND:-auto}",
            description =
                    "Where llm_query and rlm_query go: auto (the OpenAI-compatible API if configured, else the client's MCP sampling, else the agent itself), sampling, openai, agent or off (RLM_LLM_BACKEND; default: ${DEFAULT-VALUE}).")
    String backend;

    @Option(
            names = "--agent-wait-s",
            paramLabel = "S",
            defaultValue = "${env:RLM_AGENT_WAIT_S:-900}",
            description =
                    "How long a step suspended for the agent's answers waits for each sub-call before the call raises TIMEOUT in the code (RLM_AGENT_WAIT_S; default: ${DEFAULT-VALUE}).")
    long agentWaitS;

    @Option(
            names = "--llm-base-url",
            paramLabel = "URL",
            defaultValue = "${env:RLM_LLM_BASE_URL}",
            description =
                    "OpenAI-compatible API base, e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1 (RLM_LLM_BASE_URL; key from RLM_LLM_API_KEY).")
    String baseUrl;

    @Option(
            names = "--llm-model",
            paramLabel = "NAME",
            defaultValue = "${env:RLM_LLM_MODEL}",
            description = "Default model for the OpenAI-compatible API (RLM_LLM_MODEL).")
    String model;

    @Option(
            names = "--llm-max-calls",
            paramLabel = "N",
            defaultValue = "${env:RLM_LLM_MAX_CALLS:-1000}",
            description =
                    "Default llm_query calls a session may make in total (RLM_LLM_MAX_CALLS; default: ${DEFAULT-VALUE}).")
    int maxCalls;

    @Option(
            names = "--llm-max-calls-per-step",
            paramLabel = "N",
            defaultValue = "${env:RLM_LLM_MAX_CALLS_PER_STEP:-100}",
            description = "Default llm_query calls per step (RLM_LLM_MAX_CALLS_PER_STEP; default: ${DEFAULT-VALUE}).")
    int maxCallsPerStep;

    @Option(
            names = "--llm-max-concurrency",
            paramLabel = "N",
            defaultValue = "${env:RLM_LLM_MAX_CONCURRENCY:-8}",
            description =
                    "Default llm_query calls in flight at once per session (RLM_LLM_MAX_CONCURRENCY; default: ${DEFAULT-VALUE}).")
    int maxConcurrency;

    @Option(
            names = "--llm-max-prompt-chars",
            paramLabel = "N",
            defaultValue = "${env:RLM_LLM_MAX_PROMPT_CHARS:-200000}",
            description =
                    "Default largest prompt (with its system prompt) in characters (RLM_LLM_MAX_PROMPT_CHARS; default: ${DEFAULT-VALUE}).")
    int maxPromptChars;

    @Option(
            names = "--llm-token-budget",
            paramLabel = "TOKENS",
            defaultValue = "${env:RLM_LLM_TOKEN_BUDGET}",
            description =
                    "Default input+output tokens a session's llm_query calls may use (RLM_LLM_TOKEN_BUDGET; default: none).")
    Long tokenBudget;

    @Option(
            names = "--llm-timeout-s",
            paramLabel = "S",
            defaultValue = "${env:RLM_LLM_TIMEOUT_S:-120}",
            description = "Default timeout of one llm_query call (RLM_LLM_TIMEOUT_S; default: ${DEFAULT-VALUE}).")
    long timeoutS;

    /** {@code maxDepth}: the one depth limit of llm_query and rlm_query, {@link RlmOptions}' --rlm-max-depth. */
    LlmService service(CommandSpec spec, ObjectMapper json, int maxDepth) {
        KernelOptions.require(spec, maxCalls >= 1, "--llm-max-calls must be at least 1");
        KernelOptions.require(spec, maxCallsPerStep >= 1, "--llm-max-calls-per-step must be at least 1");
        KernelOptions.require(
                spec, maxConcurrency >= 1 && maxConcurrency <= 256, "--llm-max-concurrency must be 1..256");
        KernelOptions.require(spec, maxPromptChars >= 1, "--llm-max-prompt-chars must be at least 1");
        KernelOptions.require(spec, tokenBudget == null || tokenBudget >= 1, "--llm-token-budget must be at least 1");
        KernelOptions.require(spec, timeoutS >= 1, "--llm-timeout-s must be at least 1");
        KernelOptions.require(
                spec, agentWaitS >= 1 && agentWaitS <= 86_400, "--agent-wait-s must be 1..86400 (seconds)");
        LlmService.Mode mode;
        try {
            mode = LlmService.Mode.of(backend);
        } catch (IllegalArgumentException e) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--llm-backend: " + e.getMessage());
        }
        OpenAiBackend api = openAi(spec, json, mode);
        KernelOptions.require(
                spec,
                mode != LlmService.Mode.OPENAI || api != null,
                "--llm-backend openai needs --llm-base-url / RLM_LLM_BASE_URL");
        logBackend(mode, api);
        return new LlmService(
                mode,
                api,
                new LlmLimits(
                        maxCallsPerStep,
                        maxCalls,
                        maxConcurrency,
                        maxPromptChars,
                        tokenBudget,
                        Duration.ofSeconds(timeoutS),
                        maxDepth),
                json,
                Duration.ofSeconds(agentWaitS));
    }

    /** The OpenAI-compatible API at --llm-base-url, or null if none is set or {@code mode} does not use one. */
    private OpenAiBackend openAi(CommandSpec spec, ObjectMapper json, LlmService.Mode mode) {
        if (baseUrl == null
                || baseUrl.isBlank()
                || mode == LlmService.Mode.OFF
                || mode == LlmService.Mode.SAMPLING
                || mode == LlmService.Mode.AGENT) {
            return null;
        }
        URI uri;
        try {
            uri = URI.create(baseUrl.strip());
        } catch (IllegalArgumentException e) {
            uri = null;
        }
        KernelOptions.require(
                spec,
                uri != null
                        && ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
                        && uri.getHost() != null,
                "--llm-base-url must be an http(s) URL, not " + baseUrl);
        return new OpenAiBackend(new OpenAiConfig(uri, System.getenv(API_KEY_ENV), model), json);
    }

    private void logBackend(LlmService.Mode mode, OpenAiBackend api) {
        log.info(
                "llm_query: {}",
                switch (mode) {
                    case OFF -> "off";
                    case SAMPLING -> "MCP sampling of the calling client";
                    case OPENAI -> "OpenAI-compatible API at " + baseUrl;
                    case AGENT -> "the calling agent answers (steps suspend until it does)";
                    case AUTO ->
                        api != null
                                ? "OpenAI-compatible API at " + baseUrl
                                : "MCP sampling when the client offers it, else the calling agent answers "
                                        + "(no OpenAI-compatible API configured)";
                });
    }
}
