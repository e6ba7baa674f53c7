package dev.rlmmcp.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.DataType;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.rlm.RlmConfig;
import dev.rlmmcp.rlm.RunOptions;
import dev.rlmmcp.rlm.RunOutcome;
import dev.rlmmcp.rlm.StopReason;
import dev.rlmmcp.rlm.TrajectoryJsonl;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.session.ContextSource;
import dev.rlmmcp.tools.session.RunReport;
import dev.rlmmcp.tools.session.SolveTool;
import dev.rlmmcp.transport.McpServers;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * rlm-mcp ask: one RLM run at a terminal. The root loop runs in this process against the
 * OpenAI-compatible API, on a new session whose {@code context} is the file, S3 object or URL named;
 * a progress line on stderr, the answer on stdout, the figures on stderr.
 */
@Command(
        name = "ask",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Answer a question with a Recursive Language Model run here, over a file, an S3 object or a URL "
                    + "loaded into the REPL variable `context`: bin/rlm-mcp ask --file logs/app.log \"How many requests failed?\"",
            "The model is the OpenAI-compatible API of --llm-base-url / RLM_LLM_BASE_URL (--llm-model, RLM_LLM_API_KEY). "
                    + "Progress and figures go to stderr, the answer to stdout.",
            "Exit codes: 0 answered; 3 a limit stopped the run (the answer so far on stdout); 2 bad arguments; "
                    + "130 interrupted (Ctrl-C stops every child RLM and its kernel)."
        })
final class AskCommand implements Callable<Integer> {

    static final int STOPPED = 3;
    static final int INTERRUPTED = 130;

    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = true)
    Source source;

    static final class Source {
        @Option(
                names = "--file",
                paramLabel = "FILE",
                required = true,
                description = "The context: a file under --data-root (default: the current directory).")
        Path file;

        @Option(
                names = "--s3",
                paramLabel = "KEY",
                required = true,
                description = "The context: an S3 object, a key in --s3-bucket or s3://bucket/key.")
        String s3;

        @Option(names = "--url", paramLabel = "URL", required = true, description = "The context: an http(s) URL.")
        String url;
    }

    @Option(
            names = "--data-type",
            paramLabel = "TYPE",
            defaultValue = "text",
            description = "How the context is parsed: text, json, lines or csv (default: ${DEFAULT-VALUE}).")
    String dataType;

    @Option(
            names = "--trajectory",
            paramLabel = "FILE",
            description =
                    "Also write the run's trajectory to FILE as JSON Lines in alexzhang13/rlm's format, which its "
                            + "visualizer opens (written when the run ends, answered or stopped).")
    Path trajectory;

    @Parameters(paramLabel = "QUESTION", arity = "1..*", description = "The question (several words are joined).")
    List<String> question;

    @Mixin
    KernelOptions kernel;

    @Mixin
    LlmOptions llm;

    @Mixin
    RlmOptions rlm;

    @Mixin
    DataOptions data;

    @Override
    public Integer call() throws Exception {
        String asked = String.join(" ", question).strip();
        KernelOptions.require(spec, !asked.isEmpty(), "the question is empty: write it after the options, in quotes");
        ContextSource context = context();
        checkTrajectory();
        Settings settings = kernel.settings(spec);
        ObjectMapper json = Assembly.mapper();
        RlmConfig config = rlm.config(spec, json);
        LlmService service = apiService(json);
        Duration shutdownTimeout = kernel.shutdownTimeout(spec);
        Assembly app = assembled(settings, json, service, config);
        CallContext run = CallContext.create();
        Interruption interruption = Interruption.install(run, app);
        ProgressLine progress = new ProgressLine(System.err, ProgressLine.stderrIsTerminal());
        System.setErr(progress.others());
        try {
            if (!app.python().passed()) {
                return PythonCheck.EXIT_CODE;
            }
            Session session = loaded(app, settings, context, progress, run);
            progress.show("starting");
            RunOptions options = new RunOptions(llm.model, config.defaults());
            int before = session.trace(0, 0).traceLength();
            RunOutcome outcome = app.runs()
                    .solve(
                            session,
                            asked,
                            options,
                            null,
                            (figures, iteration, depth) -> progress.show(RunReport.status(figures, iteration, depth)),
                            run);
            progress.clear();
            Integer entry = SolveTool.traceEntry(session, before);
            ObjectNode reply = RunReport.reply(session.id(), outcome, entry);
            if (trajectory != null) {
                written(session, entry);
            }
            return told(outcome, reply, interruption.happened());
        } catch (RlmException e) {
            progress.clear();
            return refused(e, interruption.happened());
        } finally {
            interruption.release(app, shutdownTimeout);
        }
    }

    /** The server's parts for one question: no MCP features beyond rlm-mcp's own, no client to serve. */
    private Assembly assembled(Settings settings, ObjectMapper json, LlmService service, RlmConfig config) {
        return Assembly.of(
                settings,
                kernel.hostPolicy(spec, settings),
                json,
                new Assembly.Parts(
                        service,
                        new Assembly.Bridge(kernel.mcpLocations(spec), kernel.mcpIdleTimeout()),
                        data.sources(spec, kernel.snapshotArea()),
                        kernel.store(spec, data, null),
                        kernel.defaultLimits(),
                        McpServers.Features.NONE,
                        config));
    }

    /** Refuses a --trajectory that could not be written, before anything starts rather than after the run. */
    private void checkTrajectory() {
        if (trajectory != null) {
            Path dir = trajectory.toAbsolutePath().getParent();
            KernelOptions.require(
                    spec,
                    dir != null && Files.isDirectory(dir) && Files.isWritable(dir) && !Files.isDirectory(trajectory),
                    "--trajectory " + trajectory + " cannot be written: name a file "
                            + "in a directory that exists and that you may write to");
        }
    }

    /** The model service, which must be an OpenAI-compatible API: there is no MCP client here to sample. */
    private LlmService apiService(ObjectMapper json) {
        LlmService service = llm.service(spec, json, rlm.maxDepth(spec));
        KernelOptions.require(
                spec,
                llm.baseUrl != null
                        && !llm.baseUrl.isBlank()
                        && service.mode() != LlmService.Mode.OFF
                        && service.mode() != LlmService.Mode.SAMPLING
                        && service.mode() != LlmService.Mode.AGENT,
                "rlm-mcp ask runs the model through an OpenAI-compatible API (there is no MCP client here to sample): "
                        + "set --llm-base-url / RLM_LLM_BASE_URL, --llm-model / RLM_LLM_MODEL and, if the API needs one, "
                        + "RLM_LLM_API_KEY; --llm-backend must be auto or openai");
        return service;
    }

    /** A new session with the context (if any) loaded into its {@code context} variable. */
    private Session loaded(
            Assembly app, Settings settings, ContextSource context, ProgressLine progress, CallContext run) {
        Session session =
                app.sessions().create(ContextSource.VARIABLE, app.sessions().defaultLimits());
        if (context != null) {
            progress.show("loading " + context.shown());
            context.load(
                    session,
                    new dev.rlmmcp.data.DataRoot(settings.dataRoot()),
                    app.parts().sources(),
                    argumentOf(),
                    run);
        }
        return session;
    }

    /** A run that failed before it answered: the message and its fix on stderr; the exit code. */
    private static int refused(RlmException e, boolean interrupted) {
        PrintStream err = System.err;
        err.println("rlm-mcp ask: " + e.getMessage());
        if (e.fix() != null) {
            err.println("  fix: " + e.fix());
        }
        return interrupted ? INTERRUPTED : picocli.CommandLine.ExitCode.USAGE;
    }

    /**
     * Ctrl-C (SIGINT) or SIGTERM: the run is cancelled, which stops every child and its kernel; its answer so far
     * is printed, then the kernels stop without waiting for snapshots. The JVM exits with 130.
     */
    private static final class Interruption {
        private final CountDownLatch finished = new CountDownLatch(1);
        private final AtomicBoolean interrupted = new AtomicBoolean();
        private final Thread hook;

        private Interruption(CallContext run, Assembly app) {
            hook = new Thread(
                    () -> {
                        interrupted.set(true);
                        run.cancel();
                        try {
                            finished.await(2, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        app.close(Duration.ZERO);
                    },
                    "ask-interrupted");
        }

        static Interruption install(CallContext run, Assembly app) {
            Interruption interruption = new Interruption(run, app);
            Runtime.getRuntime().addShutdownHook(interruption.hook);
            return interruption;
        }

        boolean happened() {
            return interrupted.get();
        }

        /** The run is over: without an interruption the app closes here, with one the hook closes it. */
        void release(Assembly app, Duration shutdownTimeout) {
            finished.countDown();
            if (!interrupted.get()) {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException e) {
                    // shutting down already: the hook closes the app
                }
                app.close(shutdownTimeout);
            }
        }
    }

    /** The run's trace entry as JSON Lines in {@link #trajectory}; a failure is said, and costs the answer nothing. */
    private void written(Session session, Integer entry) {
        try {
            JsonNode found = entry == null
                    ? null
                    : Replies.trace(session.trace(entry, entry + 1))
                            .path("steps")
                            .path(0);
            if (found == null || !TrajectoryJsonl.exportable(found)) {
                System.err.println("rlm-mcp ask: no trajectory to write: the run left no entry in the trace");
                return;
            }
            Files.writeString(trajectory, TrajectoryJsonl.text(found));
            System.err.println("rlm-mcp ask: trajectory written to " + trajectory);
        } catch (java.io.IOException | RuntimeException e) {
            System.err.println("rlm-mcp ask: could not write the trajectory to " + trajectory + ": " + e.getMessage());
        }
    }

    /** The answer on stdout; the stop, the figures and where the trajectory is on stderr; the exit code. */
    private static int told(RunOutcome outcome, ObjectNode reply, boolean interrupted) {
        if (outcome.answer() != null) {
            System.out.println(outcome.answer());
        }
        System.out.flush();
        PrintStream err = System.err;
        if (outcome.stoppedBy() != null) {
            err.println("rlm-mcp ask: stopped by " + outcome.stoppedBy() + ": " + outcome.stopMessage()
                    + (outcome.answer() == null ? " (no answer so far)" : " (the answer so far is above)"));
        }
        if (outcome.figures() != null) {
            err.println("rlm-mcp ask: " + RunReport.figures(outcome.figures()));
        }
        err.println("rlm-mcp ask: session " + reply.path("session_id").asText()
                + (reply.has("trace_entry")
                        ? ", trajectory in trace entry "
                                + reply.path("trace_entry").asInt()
                        : ""));
        if (interrupted || StopReason.CANCELLED.wireName().equals(outcome.stoppedBy())) {
            return INTERRUPTED;
        }
        return outcome.stoppedBy() == null ? 0 : STOPPED;
    }

    /** The source the options name, checked before anything starts; null for a question without context. */
    private ContextSource context() {
        DataType type;
        try {
            type = DataType.valueOf(dataType.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new picocli.CommandLine.ParameterException(
                    spec.commandLine(), "--data-type must be one of " + DataType.choices() + ", not " + dataType);
        }
        if (source == null) {
            return null;
        }
        if (source.file != null) {
            Path file = source.file.toAbsolutePath().normalize();
            KernelOptions.require(spec, Files.isRegularFile(file), "--file " + source.file + " is not a readable file");
            return new ContextSource.File(file.toString(), type);
        }
        if (source.s3 != null) {
            String key = source.s3;
            String bucket = null;
            if (key.startsWith("s3://")) {
                String rest = key.substring(5);
                int slash = rest.indexOf('/');
                KernelOptions.require(
                        spec,
                        slash > 0 && slash < rest.length() - 1,
                        "--s3 " + source.s3 + " must be s3://bucket/key or a key in --s3-bucket");
                bucket = rest.substring(0, slash);
                key = rest.substring(slash + 1);
            }
            try {
                return ContextSource.s3(bucket, key, type, "--s3");
            } catch (RlmException e) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
        }
        return new ContextSource.Url(source.url, type);
    }

    /** The option a refused load is about, for its message. */
    private String argumentOf() {
        return source == null ? "context" : source.file != null ? "--file" : source.s3 != null ? "--s3" : "--url";
    }
}
