package dev.rlmmcp.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.rlm.ModelPrice;
import dev.rlmmcp.rlm.RlmConfig;
import dev.rlmmcp.rlm.RunLimits;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The options of RLM runs: their defaults, the depth alias, the price and window tables, and bad values. */
class RlmOptionsTest {

    @TempDir
    Path dir;

    private static RlmConfig config(String... args) {
        ServeCommand serve = new ServeCommand();
        CommandLine cmd = new CommandLine(serve);
        cmd.parseArgs(args);
        return serve.rlm.config(serve.spec, new ObjectMapper());
    }

    /** Refused before anything starts (--ephemeral: nor would a state directory be made if it were not). */
    private static List<String> refused(String... given) {
        StringWriter err = new StringWriter();
        CommandLine cmd = Main.commandLine();
        cmd.setErr(new PrintWriter(err, true));
        String[] args = java.util.stream.Stream.concat(
                        java.util.Arrays.stream(given), java.util.stream.Stream.of("--ephemeral"))
                .toArray(String[]::new);
        assertThat(cmd.execute(args)).as(String.join(" ", args)).isEqualTo(2);
        return err.toString().lines().toList();
    }

    @Test
    void theDefaultsAreRunLimitsDefaults() {
        RlmConfig config = config();
        assertThat(config.defaults()).isEqualTo(RunLimits.DEFAULTS);
        assertThat(config.prices()).isEmpty();
        assertThat(config.windows()).isEmpty();
        assertThat(config.defaultWindow()).isEqualTo(128_000);
    }

    @Test
    void everyLimitIsAnOption() {
        RunLimits limits = config(
                        "--rlm-max-depth",
                        "3",
                        "--rlm-max-iterations",
                        "12",
                        "--rlm-max-children",
                        "0",
                        "--rlm-max-time-s",
                        "90",
                        "--rlm-max-input-tokens",
                        "50000",
                        "--rlm-max-output-tokens",
                        "4000",
                        "--rlm-max-cost-usd",
                        "0.25",
                        "--rlm-max-consecutive-errors",
                        "2",
                        "--rlm-output-cap",
                        "5000",
                        "--rlm-compact-at",
                        "0.5",
                        "--rlm-concurrency",
                        "4")
                .defaults();
        assertThat(limits)
                .isEqualTo(new RunLimits(3, 12, 0, Duration.ofSeconds(90), 50_000L, 4_000L, 0.25, 2, 5_000, 0.5, 4));
    }

    @Test
    void llmMaxDepthIsTheSameOptionAsRlmMaxDepth() {
        assertThat(config("--llm-max-depth", "4").defaults().maxDepth()).isEqualTo(4);
        ServeCommand serve = new ServeCommand();
        new CommandLine(serve).parseArgs("--llm-max-depth", "3");
        assertThat(serve.rlm.maxDepth(serve.spec)).isEqualTo(3);
        CommandLine.Model.CommandSpec command = new CommandLine(new ServeCommand()).getCommandSpec();
        assertThat(command.findOption("--rlm-max-depth")).isSameAs(command.findOption("--llm-max-depth"));
        CommandLine.Model.OptionSpec depth =
                new CommandLine(new ServeCommand()).getCommandSpec().findOption("--llm-max-depth");
        assertThat(depth.names()).containsExactlyInAnyOrder("--llm-max-depth", "--rlm-max-depth");
        assertThat(String.join(" ", depth.description())).contains("--llm-max-depth is the same option", "default: 2");
    }

    @Test
    void pricesAndContextWindowsAreReadFromJsonFiles() throws Exception {
        Path prices = Files.writeString(dir.resolve("prices.json"), """
                {"gpt-5": {"input_per_million": 1.25, "output_per_million": 10},
                 "gpt-5-mini": {"input_per_million": 0.25, "output_per_million": 2}}""");
        Path windows = Files.writeString(dir.resolve("windows.json"), "{\"gpt-5\": 400000}");
        RlmConfig config = config(
                "--llm-prices",
                prices.toString(),
                "--llm-context-windows",
                windows.toString(),
                "--llm-context-window",
                "32000");
        assertThat(config.price("gpt-5")).isEqualTo(new ModelPrice(1.25, 10));
        assertThat(config.price("gpt-5-mini")).isEqualTo(new ModelPrice(0.25, 2));
        assertThat(config.price("other")).isNull();
        assertThat(config.window("gpt-5")).isEqualTo(400_000);
        assertThat(config.window("other")).isEqualTo(32_000);
    }

    @Test
    void aBadLimitNamesItsOptionAndTheFix() {
        assertThat(refused("serve", "--rlm-max-depth", "0"))
                .containsExactly(
                        "rlm-mcp serve: --rlm-max-depth (alias --llm-max-depth) must be at least 1, not 0",
                        "  --rlm-max-depth=N  "
                                + String.join(
                                        " ",
                                        new CommandLine(new ServeCommand())
                                                .getCommandSpec()
                                                .findOption("--rlm-max-depth")
                                                .description()));
        assertThat(refused("stdio", "--rlm-compact-at", "1.5").getFirst())
                .isEqualTo(
                        "rlm-mcp stdio: --rlm-compact-at is a share of the context window in (0, 1], such as 0.85, not 1.5");
        assertThat(refused("stdio", "--rlm-max-cost-usd", "-1").getFirst())
                .contains("--rlm-max-cost-usd must be a positive amount");
        assertThat(refused("stdio", "--rlm-max-iterations", "0").getFirst())
                .contains("--rlm-max-iterations must be at least 1");
        assertThat(refused("stdio", "--rlm-max-children", "-1").getFirst()).contains("--rlm-max-children must be 0");
        assertThat(refused("stdio", "--rlm-max-time-s", "0").getFirst())
                .contains("--rlm-max-time-s must be at least 1");
        assertThat(refused("stdio", "--rlm-max-input-tokens", "0").getFirst()).contains("--rlm-max-input-tokens");
        assertThat(refused("stdio", "--rlm-max-output-tokens", "0").getFirst()).contains("--rlm-max-output-tokens");
        assertThat(refused("stdio", "--rlm-max-consecutive-errors", "0").getFirst())
                .contains("--rlm-max-consecutive-errors");
        assertThat(refused("stdio", "--rlm-output-cap", "10").getFirst())
                .contains("--rlm-output-cap must be at least 100");
        assertThat(refused("stdio", "--rlm-concurrency", "0").getFirst()).contains("--rlm-concurrency must be 1..256");
        assertThat(refused("stdio", "--llm-context-window", "10").getFirst())
                .contains("--llm-context-window must be at least 1000");
        List<String> notANumber = refused("stdio", "--rlm-max-depth", "deep");
        assertThat(notANumber.getFirst()).contains("--rlm-max-depth", "'deep'");
        assertThat(notANumber.get(1)).startsWith("  --rlm-max-depth=N  ");
    }

    @Test
    void aBadTableNamesItsOptionItsFileAndTheShapeItNeeds() throws Exception {
        Path missing = dir.resolve("missing.json");
        assertThat(refused("stdio", "--llm-prices", missing.toString()).getFirst())
                .isEqualTo("rlm-mcp stdio: --llm-prices "
                        + missing
                        + " cannot be read (no such file): name a JSON file such as {\"model\": {\"input_per_million\": "
                        + "2.5, \"output_per_million\": 10}}");
        Path broken = Files.writeString(dir.resolve("broken.json"), "{\"gpt-5\": ");
        assertThat(refused("stdio", "--llm-prices", broken.toString()).getFirst())
                .startsWith("rlm-mcp stdio: --llm-prices " + broken + " is not valid JSON (line 1: ");
        Path wrong = Files.writeString(dir.resolve("wrong.json"), "{\"gpt-5\": {\"input\": 1}}");
        assertThat(refused("stdio", "--llm-prices", wrong.toString()).getFirst())
                .isEqualTo("rlm-mcp stdio: --llm-prices "
                        + wrong + ": the price of \"gpt-5\" must be an object with the numbers input_per_million and "
                        + "output_per_million (USD, not negative), as in {\"model\": {\"input_per_million\": 2.5, "
                        + "\"output_per_million\": 10}}, not {\"input\":1}");
        Path list = Files.writeString(dir.resolve("list.json"), "[1]");
        assertThat(refused("stdio", "--llm-context-windows", list.toString()).getFirst())
                .isEqualTo("rlm-mcp stdio: " + "--llm-context-windows " + list
                        + " must hold one JSON object keyed by model name, such as {\"model\": 128000}");
        Path small = Files.writeString(dir.resolve("small.json"), "{\"tiny\": 512}");
        assertThat(refused("stdio", "--llm-context-windows", small.toString()))
                .first()
                .asString()
                .contains("the window of \"tiny\" must be a whole number of tokens, at least 1000");
    }
}
