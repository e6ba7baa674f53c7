package dev.rlmmcp.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.rlm.ModelPrice;
import dev.rlmmcp.rlm.RlmConfig;
import dev.rlmmcp.rlm.RunLimits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * RLM runs (rlm_solve, rlm-mcp ask, rlm_query): the limits a run gets when its caller names none, and
 * what the server knows of the models: their prices (for the cost budget) and context windows (for
 * compaction). Each option's environment variable is RLM_ and its name, as for every other option.
 */
final class RlmOptions {

    private static final String PRICES_SHAPE = "{\"model\": {\"input_per_million\": 2.5, \"output_per_million\": 10}}";
    private static final String WINDOWS_SHAPE = "{\"model\": 128000}";

    @Option(
            names = {"--rlm-max-depth", "--llm-max-depth"},
            paramLabel = "N",
            defaultValue = "${env:RLM_RUN_MAX_DEPTH:-${env:RLM_LLM_MAX_DEPTH:-2}}",
            description =
                    "Deepest nesting of rlm_query and llm_query calls, one notion of depth for both: the root RLM "
                            + "is at 0, a call from code at depth d is at d+1, and rlm_query at the limit is answered by a plain "
                            + "llm_query; --llm-max-depth is the same option (RLM_RUN_MAX_DEPTH or RLM_LLM_MAX_DEPTH; default: 2).")
    int maxDepth;

    @Option(
            names = "--rlm-max-iterations",
            paramLabel = "N",
            defaultValue = "${env:RLM_RUN_MAX_ITERATIONS:-30}",
            description = "Model turns each RLM of a run may take (RLM_RUN_MAX_ITERATIONS; default: ${DEFAULT-VALUE}).")
    int maxIterations;

    @Option(
            names = "--rlm-max-children",
            paramLabel = "N",
            defaultValue = "${env:RLM_RUN_MAX_CHILDREN:-256}",
            description =
                    "Child RLMs a root run may start over its whole tree, 0 for none (RLM_RUN_MAX_CHILDREN; default: ${DEFAULT-VALUE}).")
    int maxChildren;

    @Option(
            names = "--rlm-max-time-s",
            paramLabel = "S",
            defaultValue = "${env:RLM_RUN_MAX_TIME_S:-1800}",
            description =
                    "Wall time of a root run and everything under it, in seconds (RLM_RUN_MAX_TIME_S; default: ${DEFAULT-VALUE}).")
    long maxTimeS;

    @Option(
            names = "--rlm-max-input-tokens",
            paramLabel = "TOKENS",
            defaultValue = "${env:RLM_RUN_MAX_INPUT_TOKENS}",
            description =
                    "Input tokens a root run may use over its whole tree (RLM_RUN_MAX_INPUT_TOKENS; default: none).")
    Long maxInputTokens;

    @Option(
            names = "--rlm-max-output-tokens",
            paramLabel = "TOKENS",
            defaultValue = "${env:RLM_RUN_MAX_OUTPUT_TOKENS}",
            description =
                    "Output tokens a root run may use over its whole tree (RLM_RUN_MAX_OUTPUT_TOKENS; default: none).")
    Long maxOutputTokens;

    @Option(
            names = "--rlm-max-cost-usd",
            paramLabel = "USD",
            defaultValue = "${env:RLM_RUN_MAX_COST_USD}",
            description =
                    "Cost in USD a root run may reach, priced by --llm-prices (RLM_RUN_MAX_COST_USD; default: none).")
    Double maxCostUsd;

    @Option(
            names = "--rlm-max-consecutive-errors",
            paramLabel = "N",
            defaultValue = "${env:RLM_RUN_MAX_CONSECUTIVE_ERRORS:-5}",
            description =
                    "Turns in a row whose code failed before an RLM stops (RLM_RUN_MAX_CONSECUTIVE_ERRORS; default: ${DEFAULT-VALUE}).")
    int maxConsecutiveErrors;

    @Option(
            names = "--rlm-output-cap",
            paramLabel = "CHARS",
            defaultValue = "${env:RLM_RUN_OUTPUT_CAP:-20000}",
            description =
                    "Characters of a turn's REPL output shown back to the model, at least 100 (RLM_RUN_OUTPUT_CAP; default: ${DEFAULT-VALUE}).")
    int outputCap;

    @Option(
            names = "--rlm-compact-at",
            paramLabel = "SHARE",
            defaultValue = "${env:RLM_RUN_COMPACT_AT:-0.85}",
            description = "Share of the model's context window past which earlier turns are summarised into `history`, "
                    + "in (0, 1] (RLM_RUN_COMPACT_AT; default: ${DEFAULT-VALUE}).")
    double compactAt;

    @Option(
            names = "--rlm-concurrency",
            paramLabel = "N",
            defaultValue = "${env:RLM_RUN_CONCURRENCY:-8}",
            description =
                    "Children of one rlm_query_batched running at once (RLM_RUN_CONCURRENCY; default: ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(
            names = "--llm-prices",
            paramLabel = "FILE",
            defaultValue = "${env:RLM_LLM_PRICES}",
            description = "Model prices for the cost budget, a JSON file " + PRICES_SHAPE
                    + " in USD per million tokens (RLM_LLM_PRICES; default: none, cost unknown).")
    Path prices;

    @Option(
            names = "--llm-context-windows",
            paramLabel = "FILE",
            defaultValue = "${env:RLM_LLM_CONTEXT_WINDOWS}",
            description = "Context windows of models in tokens, a JSON file " + WINDOWS_SHAPE
                    + " (RLM_LLM_CONTEXT_WINDOWS; default: --llm-context-window for every model).")
    Path windows;

    @Option(
            names = "--llm-context-window",
            paramLabel = "TOKENS",
            defaultValue = "${env:RLM_LLM_CONTEXT_WINDOW:-128000}",
            description =
                    "Context window of models --llm-context-windows does not list, at least 1000 (RLM_LLM_CONTEXT_WINDOW; default: ${DEFAULT-VALUE}).")
    int defaultWindow;

    /** The one depth limit, also llm_query's ({@link dev.rlmmcp.llm.LlmLimits#maxDepth}). */
    int maxDepth(CommandSpec spec) {
        KernelOptions.require(
                spec, maxDepth >= 1, "--rlm-max-depth (alias --llm-max-depth) must be at least 1, not " + maxDepth);
        return maxDepth;
    }

    RlmConfig config(CommandSpec spec, ObjectMapper json) {
        return new RlmConfig(limits(spec), prices(spec, json), windows(spec, json), window(spec));
    }

    RunLimits limits(CommandSpec spec) {
        int depth = maxDepth(spec);
        KernelOptions.require(
                spec, maxIterations >= 1, "--rlm-max-iterations must be at least 1, not " + maxIterations);
        KernelOptions.require(
                spec, maxChildren >= 0, "--rlm-max-children must be 0 (no children) or more, not " + maxChildren);
        KernelOptions.require(spec, maxTimeS >= 1, "--rlm-max-time-s must be at least 1, not " + maxTimeS);
        KernelOptions.require(
                spec,
                maxInputTokens == null || maxInputTokens >= 1,
                "--rlm-max-input-tokens must be at least 1 (leave it out for no limit), not " + maxInputTokens);
        KernelOptions.require(
                spec,
                maxOutputTokens == null || maxOutputTokens >= 1,
                "--rlm-max-output-tokens must be at least 1 (leave it out for no limit), not " + maxOutputTokens);
        KernelOptions.require(
                spec,
                maxCostUsd == null || (maxCostUsd > 0 && Double.isFinite(maxCostUsd)),
                "--rlm-max-cost-usd must be a positive amount such as 0.50 (leave it out for no limit), not "
                        + maxCostUsd);
        KernelOptions.require(
                spec,
                maxConsecutiveErrors >= 1,
                "--rlm-max-consecutive-errors must be at least 1, not " + maxConsecutiveErrors);
        KernelOptions.require(
                spec, outputCap >= 100, "--rlm-output-cap must be at least 100 characters, not " + outputCap);
        KernelOptions.require(
                spec,
                compactAt > 0 && compactAt <= 1,
                "--rlm-compact-at is a share of the context window in (0, 1], such as 0.85, not " + compactAt);
        KernelOptions.require(
                spec, concurrency >= 1 && concurrency <= 256, "--rlm-concurrency must be 1..256, not " + concurrency);
        return new RunLimits(
                depth,
                maxIterations,
                maxChildren,
                Duration.ofSeconds(maxTimeS),
                maxInputTokens,
                maxOutputTokens,
                maxCostUsd,
                maxConsecutiveErrors,
                outputCap,
                compactAt,
                concurrency);
    }

    private int window(CommandSpec spec) {
        KernelOptions.require(
                spec, defaultWindow >= 1000, "--llm-context-window must be at least 1000 tokens, not " + defaultWindow);
        return defaultWindow;
    }

    private Map<String, ModelPrice> prices(CommandSpec spec, ObjectMapper json) {
        Map<String, ModelPrice> table = new LinkedHashMap<>();
        if (prices == null) {
            return table;
        }
        JsonNode root = read(spec, "--llm-prices", prices, json, PRICES_SHAPE);
        root.properties().forEach(e -> {
            JsonNode price = e.getValue();
            JsonNode in = price.path("input_per_million");
            JsonNode out = price.path("output_per_million");
            KernelOptions.require(
                    spec,
                    price.isObject()
                            && in.isNumber()
                            && out.isNumber()
                            && in.asDouble() >= 0
                            && out.asDouble() >= 0
                            && Double.isFinite(in.asDouble())
                            && Double.isFinite(out.asDouble()),
                    "--llm-prices " + prices + ": the price of \"" + e.getKey() + "\" must be an object with the "
                            + "numbers input_per_million and output_per_million (USD, not negative), as in "
                            + PRICES_SHAPE
                            + ", not " + clip(price.toString()));
            table.put(e.getKey(), new ModelPrice(in.asDouble(), out.asDouble()));
        });
        return table;
    }

    private Map<String, Integer> windows(CommandSpec spec, ObjectMapper json) {
        Map<String, Integer> table = new LinkedHashMap<>();
        if (windows == null) {
            return table;
        }
        JsonNode root = read(spec, "--llm-context-windows", windows, json, WINDOWS_SHAPE);
        root.properties().forEach(e -> {
            JsonNode tokens = e.getValue();
            KernelOptions.require(
                    spec,
                    tokens.canConvertToInt() && tokens.isIntegralNumber() && tokens.asInt() >= 1000,
                    "--llm-context-windows " + windows + ": the window of \"" + e.getKey()
                            + "\" must be a whole number " + "of tokens, at least 1000, as in " + WINDOWS_SHAPE
                            + ", not " + clip(tokens.toString()));
            table.put(e.getKey(), tokens.asInt());
        });
        return table;
    }

    /** The JSON object in {@code file}; anything else stops the start naming the option and the shape it needs. */
    private static JsonNode read(CommandSpec spec, String option, Path file, ObjectMapper json, String shape) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new ParameterException(
                    spec.commandLine(),
                    option + " " + file + " cannot be read ("
                            + (Files.exists(file) ? e.getClass().getSimpleName() : "no such file")
                            + "): name a JSON file such as " + shape);
        }
        JsonNode root;
        try {
            root = json.readTree(text);
        } catch (JsonProcessingException e) {
            throw new ParameterException(
                    spec.commandLine(),
                    option + " " + file + " is not valid JSON (line "
                            + e.getLocation().getLineNr() + ": " + e.getOriginalMessage() + "): write it as " + shape);
        }
        KernelOptions.require(
                spec,
                root != null && root.isObject(),
                option + " " + file + " must hold one JSON object keyed by model name, such as " + shape);
        return root;
    }

    private static String clip(String s) {
        return s.length() <= 60 ? s : s.substring(0, 60) + "...";
    }
}
