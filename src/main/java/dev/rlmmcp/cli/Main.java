package dev.rlmmcp.cli;

import dev.rlmmcp.face.Version;
import picocli.CommandLine;
import picocli.CommandLine.Command;

@Command(name = "rlm-mcp",
        mixinStandardHelpOptions = true,
        versionProvider = Main.VersionProvider.class,
        subcommands = {StdioCommand.class, ServeCommand.class, TrainCommand.class},
        description = {
            "An MCP server that gives LLM agents a persistent Python REPL for data too big for their context.",
            "",
            "Every option can also be set by the environment variable named in its description; flags win."})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine() {
        return new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true)
                .setExecutionExceptionHandler((e, commandLine, parsed) -> {
                    if (e instanceof StateDirectories.StartRefused) {
                        commandLine.getErr().println("rlm-mcp: " + e.getMessage());
                        return 2;
                    }
                    throw e;
                });
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.err);
    }

    static final class VersionProvider implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"rlm-mcp " + Version.current()};
        }
    }
}
