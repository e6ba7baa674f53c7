package dev.rlmmcp.cli;

import dev.rlmmcp.transport.McpServers;
import dev.rlmmcp.transport.Version;
import dev.rlmmcp.transport.stdio.StartupAnswers;
import dev.rlmmcp.transport.stdio.StdioFront;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

@Command(
        name = "rlm-mcp",
        mixinStandardHelpOptions = true,
        versionProvider = Main.VersionProvider.class,
        description = {
            "An MCP server that gives LLM agents a persistent Python REPL for data too big for their context.",
            "",
            "Every option can also be set by the environment variable named in its description; flags win.",
            "",
            "bin/rlm-mcp build builds the jar this runs (the one step that runs Maven; starting never builds)."
        })
public final class Main implements Runnable {

    private static final Pattern FLAG = Pattern.compile("--[a-z0-9][a-z0-9-]*");
    /** Longest the rest of a stdio start waits for the client to list the tools (see {@link StdioFront#awaitListed}). */
    private static final Duration FRONT_FIRST = Duration.ofMillis(500);

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("ask")) {
            // a person at a terminal reads the progress line on stderr: the server's log says only what went wrong
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        StartupAnswers answers = StartupAnswers.none();
        StdioFront front = null;
        Thread kept = null;
        if (args.length > 0 && args[0].equals("stdio")) {
            // an agent client lists the tools while the server starts: answered as soon as the JVM runs if an
            // earlier start with this configuration kept its answers (found while picocli reads the command
            // line), else as soon as the command line gives the tools (see StdioCommand)
            front = StdioFront.start(System.in, System.out, answers);
            StartupAnswers into = answers;
            kept = Thread.ofPlatform().name("startup-answers").start(() -> {
                Path file = StartupKey.file(args);
                if (file != null) {
                    into.load(file);
                }
            });
        }
        CommandLine cmd = commandLine(args);
        if (kept != null) {
            awaitKept(kept, front, answers);
        }
        if (cmd.getSubcommands().get("stdio") != null) {
            StdioCommand stdio =
                    (StdioCommand) cmd.getSubcommands().get("stdio").getCommand();
            stdio.answers = answers;
            stdio.front = front;
        }
        System.exit(cmd.execute(args));
    }

    /**
     * Waits for the kept answers to be read, and if there were some, lets the front answer the client's first
     * requests before the rest of the start takes the cores.
     */
    private static void awaitKept(Thread reading, StdioFront front, StartupAnswers answers) {
        try {
            reading.join();
            if (!answers.isEmpty()) {
                front.awaitListed(FRONT_FIRST);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The command line as {@link #main} runs it, with {@code extra} MCP features served next to rlm-mcp's own
     * by {@code serve} and {@code stdio}: for a program that embeds rlm-mcp and adds tools, prompts or
     * resources of its own. Returns the exit code.
     */
    public static int run(McpServers.Features extra, String... args) {
        CommandLine cmd = commandLine();
        ((ServeCommand) cmd.getSubcommands().get("serve").getCommand()).extra = extra;
        ((StdioCommand) cmd.getSubcommands().get("stdio").getCommand()).extra = extra;
        return cmd.execute(args);
    }

    static CommandLine commandLine() {
        return configured(new CommandLine(new Main())
                .addSubcommand(new StdioCommand())
                .addSubcommand(new ServeCommand())
                .addSubcommand(new AskCommand())
                .addSubcommand(new TrainCommand()));
    }

    /**
     * The command line for these arguments: with only the subcommand they start with, when they name one.
     * Picocli reads every option of every subcommand it is given, which costs a stdio server's start
     * (what an agent client waits for) as much as the rest of its start-up before the first answer. Bad
     * An unknown option is reported by the whole command line, which can say which other subcommand has it.
     */
    static CommandLine commandLine(String... args) {
        Object only = args.length == 0
                ? null
                : switch (args[0]) {
                    case "stdio" -> new StdioCommand();
                    case "serve" -> new ServeCommand();
                    case "ask" -> new AskCommand();
                    case "train" -> new TrainCommand();
                    default -> null;
                };
        if (only == null) {
            return commandLine();
        }
        return configured(new CommandLine(new Main()).addSubcommand(only))
                .setParameterExceptionHandler((e, given) -> e instanceof UnmatchedArgumentException
                        ? withStreamsOf(e.getCommandLine(), commandLine()).execute(given)
                        : badArguments(e, given));
    }

    private static CommandLine withStreamsOf(CommandLine from, CommandLine to) {
        return to.setOut(from.getOut()).setErr(from.getErr());
    }

    private static CommandLine configured(CommandLine cmd) {
        return cmd.setCaseInsensitiveEnumValuesAllowed(true)
                .setParameterExceptionHandler(Main::badArguments)
                .setExecutionExceptionHandler(Main::failed);
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.err);
    }

    /**
     * A bad flag, a bad value or a start-up check that failed (a missing directory, a port in use):
     * the message on one line, then the help line of the flag it is about, and exit code 2. Never the
     * whole usage, never a stack trace.
     */
    static int badArguments(ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        String prefix = cmd.getCommandSpec().qualifiedName() + ": ";
        if (e instanceof UnmatchedArgumentException unmatched) {
            err.println(prefix + unknown(unmatched));
        } else {
            err.println(prefix + e.getMessage());
            OptionSpec option = optionOf(e.getArgSpec(), e.getMessage(), cmd.getCommandSpec());
            if (option != null) {
                err.println("  " + helpLine(option));
            }
        }
        err.flush();
        return CommandLine.ExitCode.USAGE;
    }

    /**
     * A state directory another server holds, or one that cannot be made: its line and the help line
     * of --state-dir, exit code 2. Anything else that stops the
     * start: one line with what went wrong, exit code 1.
     */
    static int failed(Exception e, CommandLine cmd, CommandLine.ParseResult parsed) {
        PrintWriter err = cmd.getErr();
        if (e instanceof StateDirectories.StartRefused) {
            err.println(cmd.getCommandSpec().root().qualifiedName() + ": " + e.getMessage());
            OptionSpec stateDir = cmd.getCommandSpec().findOption("--state-dir");
            if (stateDir != null) {
                err.println("  " + helpLine(stateDir));
            }
            err.flush();
            return CommandLine.ExitCode.USAGE;
        }
        Throwable cause = e;
        StringBuilder message = new StringBuilder(String.valueOf(e.getMessage()));
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
            if (cause.getMessage() != null && !message.toString().contains(cause.getMessage())) {
                message.append(": ").append(cause.getMessage());
            }
        }
        err.println(cmd.getCommandSpec().qualifiedName() + ": could not start: " + message + " ("
                + e.getClass().getSimpleName() + ")");
        err.flush();
        return CommandLine.ExitCode.SOFTWARE;
    }

    /** "unknown option '--data-rot'; did you mean --data-root? (rlm-mcp stdio --help lists every option)" */
    private static String unknown(UnmatchedArgumentException e) {
        List<String> args = e.getUnmatched();
        String first = args.isEmpty()
                ? "?"
                : args.stream().filter(a -> a.startsWith("-")).findFirst().orElse(args.get(0));
        boolean option = first.startsWith("-");
        StringBuilder line = new StringBuilder(option ? "unknown option '" : "unknown command or argument '")
                .append(first)
                .append("'");
        List<String> suggestions = e.getSuggestions();
        CommandLine parent = e.getCommandLine().getParent();
        String sibling = !option || parent == null
                ? null
                : parent.getSubcommands().values().stream()
                        .filter(c -> c != e.getCommandLine()
                                && c.getCommandSpec().findOption(first.split("=", 2)[0]) != null)
                        .map(c -> c.getCommandSpec().qualifiedName())
                        .findFirst()
                        .orElse(null);
        if (sibling != null) {
            line.append("; it is an option of ").append(sibling);
        } else if (!suggestions.isEmpty()) {
            line.append("; did you mean ")
                    .append(String.join(" or ", suggestions.subList(0, Math.min(3, suggestions.size()))))
                    .append('?');
        }
        String name = e.getCommandLine().getCommandSpec().qualifiedName();
        line.append(" (")
                .append(name)
                .append(" --help lists every ")
                .append(option ? "option" : "command")
                .append(')');
        return line.toString();
    }

    /** The option an error is about: the one picocli names, else the first of the command's flags in the message. */
    private static OptionSpec optionOf(ArgSpec arg, String message, CommandSpec command) {
        if (arg instanceof OptionSpec option) {
            return option;
        }
        Matcher m = FLAG.matcher(message == null ? "" : message);
        while (m.find()) {
            OptionSpec option = command.findOption(m.group());
            if (option != null) {
                return option;
            }
        }
        return null;
    }

    /** "--data-root=DIR  Directory rlm_load_file may read from (...)" */
    static String helpLine(OptionSpec option) {
        String label = option.arity().max() == 0 ? "" : "=" + option.paramLabel();
        return option.longestName() + label + "  " + String.join(" ", option.description());
    }

    static final class VersionProvider implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"rlm-mcp " + Version.current()};
        }
    }
}
