package dev.rlmmcp.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Start errors: the message and the flag's help line, exit code 2, never the usage or a stack trace. */
class MainTest {

    @TempDir
    Path dir;

    record Result(int exit, List<String> err) {}

    private static Result run(String... args) {
        return run(Main.commandLine(), args);
    }

    private static Result run(CommandLine cmd, String... args) {
        StringWriter err = new StringWriter();
        cmd.setErr(new PrintWriter(err, true));
        int exit = cmd.execute(args);
        return new Result(exit, err.toString().lines().toList());
    }

    @Test
    void aBadValueNamesItsFlagWithTheFlagsHelpLine() {
        Result r = run("serve", "--port", "70000");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err())
                .containsExactly(
                        "rlm-mcp serve: --port must be 0..65535, not 70000",
                        "  --port=PORT  Port to listen on, 0 for any free port (RLM_PORT; default: 8765).");
    }

    @Test
    void aValueOfTheWrongTypeIsTwoLines() {
        Result r = run("stdio", "--timeout-s", "soon");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).hasSize(2);
        assertThat(r.err().get(0)).startsWith("rlm-mcp stdio: ").contains("--timeout-s", "'soon'");
        assertThat(r.err().get(1)).startsWith("  --timeout-s=S  Default per-call timeout");
    }

    @Test
    void aDataRootThatIsNotADirectory() {
        Result r = run("stdio", "--data-root", dir.resolve("missing").toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err())
                .containsExactly(
                        "rlm-mcp stdio: --data-root " + dir.resolve("missing") + " is not a directory",
                        "  --data-root=DIR  Directory rlm_load_file may read from (RLM_DATA_ROOT; default: the current directory).");
    }

    @Test
    void unknownOptionsAndCommandsAreOneLineWithASuggestion() {
        assertThat(run("stdio", "--data-rot", "/x").err())
                .containsExactly("rlm-mcp stdio: unknown option '--data-rot'; "
                        + "did you mean --data-root? (rlm-mcp stdio --help lists every option)");
        assertThat(run("stdio", "--host", "0.0.0.0").err())
                .containsExactly("rlm-mcp stdio: unknown option '--host'; "
                        + "it is an option of rlm-mcp serve (rlm-mcp stdio --help lists every option)");
        Result command = run("serv");
        assertThat(command.exit()).isEqualTo(2);
        assertThat(command.err())
                .containsExactly(
                        "rlm-mcp: unknown command or argument 'serv'; did you mean serve? (rlm-mcp --help lists every command)");
    }

    /** A start reads only its subcommand's options; what it says about bad ones is what the whole command line says. */
    @Test
    void theCommandLineOfOneSubcommandReportsBadArgumentsAsTheWholeOneDoes() {
        for (String[] args : List.of(
                new String[] {"stdio", "--host", "0.0.0.0"},
                new String[] {"stdio", "--data-rot", "x"},
                new String[] {"stdio", "--timeout-s", "soon"},
                new String[] {"serve", "--port", "70000"},
                new String[] {"stdio", "--data-root", dir.resolve("missing").toString()})) {
            Result whole = run(Main.commandLine(), args);
            Result one = run(Main.commandLine(args), args);
            assertThat(one).as(String.join(" ", args)).isEqualTo(whole);
            assertThat(whole.exit()).isEqualTo(2);
        }
        assertThat(Main.commandLine("stdio").getSubcommands()).containsOnlyKeys("stdio");
        assertThat(Main.commandLine("--help").getSubcommands()).containsOnlyKeys("stdio", "serve", "ask", "train");
    }

    @Test
    void aFailureThatIsNotAboutAFlagIsOneLineWithoutATrace() {
        StringWriter err = new StringWriter();
        CommandLine cmd = new CommandLine(new Failing());
        cmd.setErr(new PrintWriter(err, true));
        int exit = Main.failed(new IllegalStateException("outer", new java.io.IOException("disk full")), cmd, null);
        assertThat(exit).isEqualTo(1);
        assertThat(err.toString().lines().toList())
                .containsExactly("failing: could not start: outer: disk full (IllegalStateException)");
    }

    @CommandLine.Command(name = "failing")
    static final class Failing implements Runnable {
        @Override
        public void run() {}
    }
}
